// netd as a real process: network figures from the real /sys/class/net (a veth pair into a
// temporary network namespace carries test traffic), the /networks count from a real ZooKeeper
// (kept while ZooKeeper is down), and the primary role over the real socket.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { NETD, PRIMARY_ROLE, rpcClient, type NetdApi, type RpcClient } from '@pvc/rpc';
import { realClock } from '@pvc/runtime';
import { connectZk, type RealZkClient } from '@pvc/zk';
import { waitFor } from '../../cluster/harness/index.js';
import { waitUntil } from '../../support/wait.js';
import { ZkTestServer } from '../../support/zk-server.js';
import { logLines, startService, type ServiceProcess } from './service-process.js';

const tag = `${process.pid % 100_000}`;
const NETNS = `pvc-netd-${tag}`;
const VETH = `pvcn${tag}`; // host side, named in the config; the peer lives in the namespace
const octet = process.pid % 250;
const HOST_IP = `198.18.${octet}.1`;
const PEER_IP = `198.18.${octet}.2`;

function ip(...args: string[]): void {
  const r = spawnSync('ip', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ip ${args.join(' ')}: ${r.stderr.trim()}`);
}

function createVethPair(): void {
  ip('netns', 'add', NETNS);
  ip('link', 'add', VETH, 'type', 'veth', 'peer', 'name', 'peer0', 'netns', NETNS);
  ip('addr', 'add', `${HOST_IP}/30`, 'dev', VETH);
  ip('link', 'set', VETH, 'up');
  ip('-n', NETNS, 'addr', 'add', `${PEER_IP}/30`, 'dev', 'peer0');
  ip('-n', NETNS, 'link', 'set', 'peer0', 'up');
}

function removeVethPair(): void {
  spawnSync('ip', ['netns', 'del', NETNS]); // deleting the namespace deletes the pair
  spawnSync('ip', ['link', 'del', VETH]);
}

/** UDP datagrams to the peer for `ms` (the peer answers with ICMP unreachable: traffic both ways). */
async function traffic(ms: number): Promise<void> {
  const sock = createSocket('udp4');
  const payload = Buffer.alloc(1000, 0x61);
  const end = realClock.now() + ms;
  while (realClock.now() < end) {
    await new Promise<void>((r) => sock.send(payload, 9, PEER_IP, () => r()));
    await realClock.sleep(20);
  }
  sock.close();
}

type Figures = Record<string, Record<string, number | string>>;

describe('netd (built dist/main.js, real sysfs and ZooKeeper)', () => {
  let zk: ZkTestServer;
  let admin: RealZkClient;
  let netd: ServiceProcess;
  let client: RpcClient<NetdApi>;
  let role: RpcClient<{ setPrimary(req: { primary: boolean; reason: string }): Promise<{ primary: boolean }> }>;

  const stats = async (): Promise<{ figures: Figures; networkCount: number }> => {
    const r = await client.getNetworkStats({}, { deadlineMs: 1000 });
    return { figures: JSON.parse(r.statsJson) as Figures, networkCount: r.networkCount };
  };

  before(async () => {
    removeVethPair();
    createVethPair();
    zk = await ZkTestServer.start();
    admin = await connectZk({ hosts: ['127.0.0.1'], port: zk.port, clock: realClock });
    await admin.ensurePath('/networks/100');
    netd = await startService('netd', [
      ['pvc.cluster.coordinators', ['localhost']],
      ['pvc.database', { zookeeper: { port: zk.port } }],
      ['pvc.system.fencing.intervals.keepalive_interval', 1],
      ['pvc.system.configuration.networking.upstream.device', VETH],
    ]);
    client = rpcClient(netd.target, NETD);
    role = rpcClient(netd.target, PRIMARY_ROLE);
  });

  after(async () => {
    client?.close();
    role?.close();
    await netd?.cleanup();
    await admin?.close();
    await zk?.destroy();
    removeVethPair();
  });

  test('figures for the configured veth: well-formed, non-negative, and rising with traffic', async () => {
    const first = await waitFor('veth figures', 10_000, async () => (await stats()).figures[VETH]);
    const keys = ['rx_bps', 'rx_pps', 'tx_bps', 'tx_pps', 'total_bps', 'total_pps', 'link_speed', 'state'];
    const all = (await stats()).figures;
    assert.equal(all.lo, undefined, 'lo is never reported');
    for (const [dev, f] of Object.entries(all)) {
      assert.deepEqual(Object.keys(f), keys, dev);
      for (const k of keys.slice(0, 7)) assert.ok(Number.isInteger(f[k]) && (f[k] as number) >= 0, `${dev}.${k} = ${f[k]}`);
      assert.equal(f.total_bps, (f.rx_bps as number) + (f.tx_bps as number));
    }
    assert.equal(first.state, 'up');
    const sending = traffic(3000);
    const busy = await waitFor('veth traffic in the figures', 6000, async () => {
      const f = (await stats()).figures[VETH];
      return f && (f.tx_bps as number) > 8000 && (f.tx_pps as number) > 0 && (f.rx_pps as number) > 0 ? f : undefined;
    }, 200);
    await sending;
    // 1000-byte datagrams every ~20 ms: far above zero, below the theoretical maximum of the payload rate.
    assert.ok((busy.tx_bps as number) < 1028 * 8 * 60, `tx_bps ${busy.tx_bps}`);
    await waitFor('figures back to quiet', 6000, async () => ((await stats()).figures[VETH]?.tx_bps === 0 ? true : undefined), 200);
  });

  test('networkCount follows /networks and keeps the last value while ZooKeeper is down', async () => {
    await waitFor('networkCount 1', 15_000, async () => ((await stats()).networkCount === 1 ? true : undefined));
    await admin.ensurePath('/networks/200');
    await admin.ensurePath('/networks/300');
    await waitFor('networkCount 3', 5000, async () => ((await stats()).networkCount === 3 ? true : undefined));
    await zk.stop();
    for (let i = 0; i < 3; i++) {
      assert.equal((await stats()).networkCount, 3);
      await realClock.sleep(300);
    }
    await zk.start();
    await admin.waitConnected({ timeoutMs: 15_000 });
    await admin.delete('/networks/300');
    await waitFor('networkCount 2 after ZooKeeper returned', 20_000, async () => ((await stats()).networkCount === 2 ? true : undefined));
  });

  test('setPrimary: on, on again (no-op), off; each transition logged once with its reason', async () => {
    assert.deepEqual(await role.setPrimary({ primary: true, reason: 'takeover' }, { deadlineMs: 1000 }), { primary: true });
    assert.deepEqual(await role.setPrimary({ primary: true, reason: 'takeover again' }, { deadlineMs: 1000 }), { primary: true });
    assert.deepEqual(await role.setPrimary({ primary: false, reason: 'relinquish: test' }, { deadlineMs: 1000 }), { primary: false });
    // The log lines travel through the child's stdout pipe: wait until the second has arrived. (A
    // wrongly logged no-op 'again' would come before the 'secondary' line on the ordered pipe.)
    await waitUntil(() => logLines(netd, /^primary role: /), { what: "two 'primary role' log lines on netd's stdout", until: (l) => l.length >= 2 });
    assert.deepEqual(
      logLines(netd, /^primary role: /).map((l) => [l.msg, l.reason]),
      [
        ['primary role: primary', 'takeover'],
        ['primary role: secondary', 'relinquish: test'],
      ],
    );
  });

  test('SIGTERM: exit 0', async () => {
    assert.equal(await netd.stop(), 0, netd.output());
  });
});
