// netd's dnsmasq manager with the real dnsmasq, a real ZooKeeper and busybox udhcpc clients:
// a throwaway "primary" namespace holds bridge vmbr<vni> with the gateway and runs dnsmasq (through
// `ip netns exec`); each client namespace has one veth end on that bridge. The lease hook runs in
// dnsmasq's namespace, so the test wraps it in `nsenter --net=<this process's namespace>` to reach
// the test ZooKeeper on 127.0.0.1. Root only: fails loudly without root, dnsmasq, busybox or nsenter.
// Every asynchronous condition is waited for with a bound.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createExec, createLogger, realClock } from '@pvc/runtime';
import { connectZk, paths, type ZkClient } from '@pvc/zk';
import {
  createDnsmasqHost, defaultHookCommand, DnsmasqProcess, dnsmasqLayout, initLeases, readLease, type DnsmasqNetwork, type Lease,
} from '../../../apps/netd/src/dhcp/index.js';
import { spawnUdhcpc, udhcpcEvents, udhcpcOnce, writeUdhcpcScript } from '../../support/udhcpc.js';
import { waitUntil } from '../../support/wait.js';
import { ZkTestServer } from '../../support/zk-server.js';
import { addNetns, deleteNetns, ip } from './nft-netns.js';

/** Fails loudly (never a silent pass) when the test cannot run here. */
export function requireDhcpTools(): void {
  assert.equal(process.getuid?.(), 0, 'the dnsmasq integration test needs root (network namespaces, dnsmasq)');
  for (const [cmd, ...args] of [['/usr/sbin/dnsmasq', '--version'], ['busybox', 'udhcpc', '--help'], ['nsenter', '--version'], ['ip', '-V']]) {
    const r = spawnSync(cmd!, args, { encoding: 'utf8' });
    assert.equal(r.error, undefined, `${cmd} is needed (Debian packages dnsmasq-base, busybox, util-linux, iproute2): ${r.error?.message ?? ''}`);
  }
}

/** The primary's namespace: bridge `bridge` holding `gatewayCidr`. */
export function addPrimaryNetns(ns: string, bridge: string, gatewayCidr: string): void {
  addNetns(ns);
  ip('-n', ns, 'link', 'set', 'lo', 'up');
  ip('-n', ns, 'link', 'add', bridge, 'type', 'bridge');
  ip('-n', ns, 'address', 'add', gatewayCidr, 'dev', bridge);
  ip('-n', ns, 'link', 'set', bridge, 'up');
}

/** A client namespace whose `eth0` (MAC `mac`) is a veth port of `bridge` in `primary`. */
export function addClientNetns(ns: string, primary: string, bridge: string, port: string, mac: string): void {
  addNetns(ns);
  ip('-n', primary, 'link', 'add', port, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns);
  ip('-n', primary, 'link', 'set', port, 'master', bridge, 'up');
  setClientMac(ns, mac);
}

/** Sets the client's MAC (link down, address, up) and removes its addresses. */
export function setClientMac(ns: string, mac: string): void {
  ip('-n', ns, 'link', 'set', 'eth0', 'down');
  ip('-n', ns, 'address', 'flush', 'dev', 'eth0');
  ip('-n', ns, 'link', 'set', 'eth0', 'address', mac);
  ip('-n', ns, 'link', 'set', 'eth0', 'up');
  ip('-n', ns, 'link', 'set', 'lo', 'up');
}

const ID = process.pid % 100_000;
const NS = `pvc-dhcp-${ID}`;
const CLIENT_A = `pvc-dhca-${ID}`;
const CLIENT_B = `pvc-dhcb-${ID}`;
const VNI = '4242';
const BRIDGE = `vmbr${VNI}`;
const MAC_A = '52:54:00:4a:00:01';
const MAC_B = '52:54:00:4a:00:02';
const MAC_C = '52:54:00:4a:00:03';
const RESERVED = '10.42.0.50';

const network: DnsmasqNetwork = {
  vni: VNI,
  domain: 'test4242.local',
  ip4Gateway: '10.42.0.1',
  ip6Gateway: null,
  dhcp4Flag: true,
  dhcp6Flag: false,
  dhcp4Start: '10.42.0.100',
  dhcp4End: '10.42.0.200',
};

const inRange = (addr: string): boolean => {
  const last = Number(addr.split('.')[3]);
  return addr.startsWith('10.42.0.') && last >= 100 && last <= 200;
};

/** The pids of processes whose command line names this network's hosts directory (our dnsmasq). */
function dnsmasqPids(hostsDir: string): number[] {
  const r = spawnSync('pgrep', ['-f', '--', `--dhcp-hostsdir=${hostsDir}`], { encoding: 'utf8' });
  return r.stdout.split('\n').filter((l) => l !== '').map(Number);
}

describe('dnsmasq for a managed network: leases in ZooKeeper (root, real dnsmasq and udhcpc)', () => {
  let dir = '';
  let server: ZkTestServer | undefined;
  let zk: ZkClient | undefined;
  let proc: DnsmasqProcess | undefined;
  let clientA: ChildProcess | undefined;
  let script = '';
  let eventsA = '';
  let eventsB = '';
  let leaseA: Lease | undefined;
  const logs: Record<string, unknown>[] = [];
  const layout = (): ReturnType<typeof dnsmasqLayout> => dnsmasqLayout({ dynamicDirectory: join(dir, 'run'), logDirectory: join(dir, 'log') }, VNI);
  const lease = (mac: string): Promise<Lease | undefined> => readLease(zk!, VNI, mac);
  const dnsmasqLog = (): string =>
    existsSync(layout().logFile) ? readFileSync(layout().logFile, 'utf8').split('\n').filter((l) => !/ (sent size|requested options|next server|tags):/.test(l)).slice(-40).join('\n') : '(no log)';
  /** waitUntil (a defined value), with dnsmasq's log in the failure message. */
  const waitFor = async <T>(probe: () => T | Promise<T>, opts: Parameters<typeof waitUntil<T>>[1]): Promise<NonNullable<T>> => {
    const v = await waitUntil(probe, opts).catch((err: unknown) => {
      throw new Error(`${(err as Error).message}\ndnsmasq log:\n${dnsmasqLog()}`);
    });
    assert.ok(v !== undefined && v !== null, opts.what);
    return v;
  };

  before(async () => {
    requireDhcpTools();
    dir = mkdtempSync(join(tmpdir(), 'pvc-dhcp-'));
    // dnsmasq reads the hosts directory after dropping root (to nobody), like /run/pvc on a node.
    chmodSync(dir, 0o755);
    script = writeUdhcpcScript(dir);
    eventsA = join(dir, 'events-a');
    eventsB = join(dir, 'events-b');
    addPrimaryNetns(NS, BRIDGE, '10.42.0.1/24');
    addClientNetns(CLIENT_A, NS, BRIDGE, 'porta', MAC_A);
    addClientNetns(CLIENT_B, NS, BRIDGE, 'portb', MAC_B);
    server = await ZkTestServer.start();
    zk = await connectZk({ hosts: ['127.0.0.1'], port: server.port, clock: realClock });
    await zk.ensurePath(paths.networks);
    await zk.createObject(paths.network(VNI).root, [['', 'test4242'], ['nettype', 'managed'], ['dhcp4_leases', ''], ['dhcp4_reservations', '']]);
    proc = new DnsmasqProcess(VNI, {
      exec: createExec(),
      clock: realClock,
      logger: createLogger({ service: 'test', destination: { write: (s: string) => void logs.push(JSON.parse(s) as Record<string, unknown>) } }),
      host: createDnsmasqHost(),
      dirs: { dynamicDirectory: join(dir, 'run'), logDirectory: join(dir, 'log') },
      zk: { hosts: ['127.0.0.1'], port: server.port },
      initLeases: () => initLeases(zk!, VNI),
      hookCommand: ['/usr/bin/nsenter', `--net=/proc/${process.pid}/ns/net`, '--', ...defaultHookCommand()],
      command: ['ip', 'netns', 'exec', NS, '/usr/sbin/dnsmasq'],
      timing: { startCheckMs: 1000 },
    });
  });

  after(async () => {
    const steps: [string, () => unknown][] = [
      ['client A', () => clientA?.kill('SIGKILL')],
      ['dnsmasq manager', () => proc?.stop('test over')],
      ['dnsmasq processes', () => dir && dnsmasqPids(layout().hostsDir).forEach((pid) => process.kill(pid, 'SIGKILL'))],
      ['namespaces', () => [CLIENT_A, CLIENT_B, NS].forEach(deleteNetns)],
      ['ZooKeeper client', () => zk?.close()],
      ['ZooKeeper server', () => server?.destroy()],
      ['temp dir', () => dir && rmSync(dir, { recursive: true, force: true })],
    ];
    for (const [what, step] of steps) {
      try {
        await step();
      } catch (err) {
        console.error(`clean-up of ${what} failed: ${(err as Error).message}`);
      }
    }
  });

  test('dnsmasq starts with the reservation files and the lease hook in place', async () => {
    await proc!.start(network, [{ mac: MAC_B, ipaddr: RESERVED }]);
    assert.equal(proc!.state, 'running');
    assert.equal(readFileSync(join(layout().hostsDir, MAC_B), 'utf8'), `${MAC_B},${RESERVED}`);
    // dnsmasq and its script helper (a fork of it) carry the command line.
    assert.ok(dnsmasqPids(layout().hostsDir).includes(proc!.pid!), 'the managed dnsmasq runs');
  });

  test('a client gets a lease in the range; the lease appears in ZooKeeper with the original\'s children', async () => {
    clientA = spawnUdhcpc(CLIENT_A, script, eventsA, ['-x', 'hostname:guest-a']);
    const bound = await waitFor(() => udhcpcEvents(eventsA).find((e) => e.event === 'bound'), { what: 'udhcpc bound in client A', timeoutMs: 20_000 });
    assert.ok(inRange(bound.ip), `address ${bound.ip} in 10.42.0.100-200`);
    leaseA = await waitFor(() => lease(MAC_A), { what: `the lease of ${MAC_A} in ZooKeeper`, timeoutMs: 15_000 });
    assert.equal(leaseA.ipaddr, bound.ip);
    assert.equal(leaseA.hostname, 'guest-a');
    assert.equal(leaseA.clientid, `01:${MAC_A}`, 'busybox sends client-id 01:<mac>');
    const expected = Math.floor(Date.now() / 1000) + 48 * 3600;
    assert.ok(Math.abs(Number(leaseA.expiry) - expected) < 120, `expiry ${leaseA.expiry} is about now + 48 h`);
    const root = paths.network(VNI).lease(MAC_A).root;
    assert.equal(await zk!.read(root), '', 'lease root data is ""');
    assert.deepEqual((await zk!.children(root)).sort(), ['clientid', 'expiry', 'hostname', 'ipaddr']);
  });

  test('a reservation gives the reserved address', async () => {
    const got = udhcpcOnce(CLIENT_B, script, eventsB);
    assert.equal(got, RESERVED, `client B got ${got ?? 'nothing'}\ndnsmasq log:\n${dnsmasqLog()}`);
    const stored = await waitFor(() => lease(MAC_B), { what: `the lease of ${MAC_B} in ZooKeeper`, timeoutMs: 15_000 });
    assert.equal(stored.ipaddr, RESERVED);
    assert.equal(stored.hostname, '');
  });

  test('a reservation added while running is used after the SIGHUP (client C)', async () => {
    await proc!.setReservations([{ mac: MAC_B, ipaddr: RESERVED }, { mac: MAC_C, ipaddr: '10.42.0.51' }]);
    setClientMac(CLIENT_B, MAC_C);
    const got = udhcpcOnce(CLIENT_B, script, eventsB);
    assert.equal(got, '10.42.0.51', `client C got ${got ?? 'nothing'}`);
    assert.ok(logs.some((l) => l.msg === 'dnsmasq sent SIGHUP'), 'SIGHUP logged');
  });

  test('after dnsmasq is stopped and started again it still knows the lease (init), and a renew keeps the address', async () => {
    const before = dnsmasqPids(layout().hostsDir);
    await proc!.stop('test: restart');
    assert.equal(proc!.state, 'stopped');
    await waitFor(() => dnsmasqPids(layout().hostsDir).length === 0, { what: 'the old dnsmasq gone', timeoutMs: 5000 });
    await proc!.start(network, [{ mac: MAC_B, ipaddr: RESERVED }]);
    assert.notDeepEqual(dnsmasqPids(layout().hostsDir), before, 'a new dnsmasq');
    assert.ok((await lease(MAC_A)) !== undefined, 'the start did not delete the stored lease');
    // netd handed the stored lease to the new dnsmasq's init through the file (no ZK session in the hook).
    assert.match(readFileSync(layout().initLeasesFile, 'utf8'), new RegExp(` ${MAC_A} ${leaseA!.ipaddr.replace(/\./g, '\\.')} `));
    // dnsmasq knows A's lease: another client asking for A's address does not get it.
    setClientMac(CLIENT_B, '52:54:00:4a:00:04');
    const other = udhcpcOnce(CLIENT_B, script, eventsB, ['-r', leaseA!.ipaddr]);
    assert.ok(other !== undefined && other !== leaseA!.ipaddr && inRange(other), `another client got ${other ?? 'nothing'}, not A's ${leaseA!.ipaddr}`);
    // A renews (SIGUSR1: unicast REQUEST for its address): same address, expiry moved forward.
    await new Promise((r) => setTimeout(r, 1100));
    const renewsBefore = udhcpcEvents(eventsA).filter((e) => e.event === 'renew').length;
    clientA!.kill('SIGUSR1');
    const renew = await waitFor(() => udhcpcEvents(eventsA).filter((e) => e.event === 'renew')[renewsBefore], { what: 'udhcpc renew in client A', timeoutMs: 20_000 });
    assert.equal(renew.ip, leaseA!.ipaddr);
    const renewed = await waitFor(() => lease(MAC_A), { what: 'the renewed lease in ZooKeeper', until: (l) => l !== undefined && Number(l.expiry) > Number(leaseA!.expiry), timeoutMs: 15_000 });
    assert.equal(renewed.ipaddr, leaseA!.ipaddr);
  });

  test('a release deletes the lease key', async () => {
    const exited = new Promise((r) => clientA!.once('exit', r));
    clientA!.kill('SIGTERM');
    await exited;
    clientA = undefined;
    await waitFor(async () => (await zk!.exists(paths.network(VNI).lease(MAC_A).root)) === undefined, { what: `${MAC_A}'s lease key deleted`, timeoutMs: 15_000 });
  });

  test('stop ends dnsmasq; a crash is restarted after a delay', async () => {
    const pid = proc!.pid;
    assert.ok(pid !== undefined);
    process.kill(pid, 'SIGKILL');
    await waitFor(() => proc!.state === 'running' && proc!.pid !== pid, { what: 'dnsmasq restarted after the crash', timeoutMs: 10_000 });
    assert.ok(logs.some((l) => l.msg === 'dnsmasq is down; restarting after a delay'));
    await proc!.stop('test over');
    await waitFor(() => dnsmasqPids(layout().hostsDir).length === 0, { what: 'no dnsmasq left', timeoutMs: 5000 });
  });
});
