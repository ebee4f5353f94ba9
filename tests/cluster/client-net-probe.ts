/**
 * A prober namespace on a client network: `<cluster>-prb` with `eth0` (a static address of the
 * network and a default route on it), whose peer `<cluster>-pv` is a port of `vmbr<vni>` on one
 * host — a "guest" that is not a VM, for pings every 20 ms and DHCP probes ({@link DhcpProbe}).
 * The harness's sweep deletes only `<name>-hvN` namespaces: callers `remove()` it (in a `finally`,
 * and before a network removal, so no foreign port is left on the bridge); creating it again
 * removes a leftover of the same name first.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createExec } from '@pvc/runtime';
import type { ClusterHost } from './harness/index.js';
import { onLines } from '../support/lines.js';

const exec = createExec();

async function ip(...args: string[]): Promise<void> {
  const r = await exec.run('ip', args);
  if (r.exitCode !== 0) throw new Error(`ip ${args.join(' ')}: ${r.stderr.trim()}`);
}

/** The prober namespace. */
export interface ProbeNamespace {
  netns: string;
  /** The host-side veth end (in the host's namespace). */
  port: string;
  /** Makes `port` a port of `bridge` on the host (when the bridge exists only later, e.g. a benchmark of `network add`). */
  attach(bridge: string): Promise<void>;
  remove(): Promise<void>;
}

/** Creates the namespace with `address` (CIDR) on eth0; attaches it to `bridge` on `host` unless `bridge` is undefined. */
export async function createProbeNamespace(clusterName: string, host: ClusterHost, address: string, bridge?: string): Promise<ProbeNamespace> {
  const netns = `${clusterName}-prb`;
  const port = `${clusterName}-pv`;
  const remove = async (): Promise<void> => {
    await exec.run('ip', ['netns', 'del', netns]);
    await exec.run('ip', ['link', 'del', port]);
  };
  await remove();
  await ip('netns', 'add', netns);
  await ip('-n', netns, 'link', 'set', 'lo', 'up');
  await ip('link', 'add', port, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', netns);
  await ip('link', 'set', port, 'netns', host.netns);
  await ip('-n', netns, 'address', 'add', address, 'dev', 'eth0');
  await ip('-n', netns, 'link', 'set', 'eth0', 'up');
  await ip('-n', netns, 'route', 'add', 'default', 'dev', 'eth0');
  const attach = (br: string): Promise<void> => ip('-n', host.netns, 'link', 'set', port, 'master', br, 'up');
  if (bridge !== undefined) await attach(bridge);
  return { netns, port, attach, remove };
}

/**
 * A DHCP probe sent from the namespace every 50 ms until the server answers: `discover` = a
 * DHCPDISCOVER (broadcast flag, client MAC `mac`) answered by an OFFER; `inform` = a DHCPINFORM for
 * the namespace's own static address `ciaddr` (asks only for the options) answered by an ACK:
 * dnsmasq answers it at once, with no lease, no reservation and none of the ~3 s ICMP check it
 * makes before offering a dynamic address (during which it answers no other DHCP packet).
 * `answerAt` is the epoch ms of the first answer, `address` the offered address (discover).
 * Plain Node inside the namespace (`ip netns exec … node -e`), UDP 68 → 255.255.255.255:67.
 */
export class DhcpProbe {
  answerAt: number | undefined;
  address: string | undefined;
  firstSendAt: number | undefined;
  private child: ChildProcess | undefined;

  constructor(readonly netns: string, readonly mac: string, readonly kind: 'discover' | 'inform' = 'discover', readonly ciaddr = '0.0.0.0') {}

  start(): void {
    const script = `
const dgram = require('node:dgram');
const [macArg, kind, ciaddr] = process.argv.slice(1);
const mac = Buffer.from(macArg.split(':').map((x) => parseInt(x, 16)));
const xid = Math.floor(Math.random() * 0xffffffff) >>> 0;
const p = Buffer.alloc(300);
p[0] = 1; p[1] = 1; p[2] = 6; p.writeUInt32BE(xid, 4); mac.copy(p, 28);
if (kind === 'inform') Buffer.from(ciaddr.split('.').map(Number)).copy(p, 12); else p.writeUInt16BE(0x8000, 10);
p.writeUInt32BE(0x63825363, 236); p[240] = 53; p[241] = 1; p[242] = kind === 'inform' ? 8 : 1; p[243] = 255;
const want = kind === 'inform' ? 5 : 2;
const s = dgram.createSocket({ type: 'udp4', reuseAddr: true });
s.on('message', (m) => {
  if (m.length < 244 || m[0] !== 2 || m.readUInt32BE(4) !== xid) return;
  for (let i = 240; i < m.length - 2 && m[i] !== 255; i += m[i] === 0 ? 1 : 2 + m[i + 1]) {
    if (m[i] === 53 && m[i + 2] === want) { console.log('answer ' + Date.now() + ' ' + [...m.subarray(16, 20)].join('.')); process.exit(0); }
  }
});
s.on('error', (e) => { console.log('error ' + e.message); });
s.bind(68, () => {
  s.setBroadcast(true);
  console.log('start ' + Date.now());
  const send = () => s.send(p, 67, '255.255.255.255', () => undefined);
  send(); setInterval(send, 50);
});`;
    this.child = spawn('ip', ['netns', 'exec', this.netns, process.execPath, '-e', script, this.mac, this.kind, this.ciaddr], { stdio: ['ignore', 'pipe', 'inherit'] });
    onLines(this.child.stdout!, (l) => {
      const [what, at, addr] = l.split(' ');
      if (what === 'start') this.firstSendAt = Number(at);
      if (what === 'answer' && this.answerAt === undefined) {
        this.answerAt = Number(at);
        this.address = addr;
      }
    });
  }

  stop(): void {
    this.child?.kill('SIGKILL');
  }
}
