// Root: storage state in Zookeeper from a real one-host Ceph 16 (ceph-host.ts, with a mgr: `ceph df`,
// `osd df` and `osd status` are mgr commands) and a real ZooKeeper. The built cephd (dist/main.js)
// runs inside the Ceph host's network namespace, as a node would run it next to its Ceph, reaching
// ZooKeeper through a port bridge (ns-bridge.ts); its node name is the OSD's host name. It records
// its own OSD, and as primary writes /ceph, /ceph/health, /ceph/util, the pool's and the OSD's
// stats with the original's field names. With the monitor stopped (SIGSTOP: every Ceph command
// hangs, as with an unreachable cluster) the stats are marked stale in /ceph/stats_state, the
// keys keep their values, and GetStorageStats keeps answering within its 1 s bound; SIGCONT
// brings them back. Keepalive interval 5 s (the default), so each wait is a few passes long.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CEPHD, PRIMARY_ROLE, rpcClient, type CephdApi, type PrimaryRoleApi, type RpcClient } from '@pvc/rpc';
import { realClock } from '@pvc/runtime';
import {
  cephHealthJson, cephStatsStateJson, connectZk, OSD_STATS_FIELDS, POOL_STATS_FIELDS, type CephStatsState, type RealZkClient,
} from '@pvc/zk';
import { waitUntil } from '../../support/wait.js';
import { ZkTestServer } from '../../support/zk-server.js';
import { logLines, startService, type ServiceProcess } from '../services/service-process.js';
import { CephHost } from './ceph-host.js';
import { pidsOf } from './run.js';
import { bridgePortIntoNamespace, type NsBridge } from './ns-bridge.js';


describe('storage stats from a real one-host Ceph, written by the real cephd', () => {
  let ceph: CephHost;
  let zk: ZkTestServer;
  let admin: RealZkClient;
  let bridge: NsBridge;
  let cephd: ServiceProcess;
  let client: RpcClient<CephdApi>;
  let role: RpcClient<PrimaryRoleApi>;
  let node: string;
  let monPids: number[] = [];

  const read = (path: string): Promise<string | undefined> => admin.read(path);
  const state = async (): Promise<CephStatsState | undefined> => {
    const raw = await read('/ceph/stats_state');
    return raw === undefined ? undefined : cephStatsStateJson.decode(raw, '/ceph/stats_state');
  };

  before(async () => {
    ceph = await CephHost.start({ withMgr: true });
    zk = await ZkTestServer.start();
    admin = await connectZk({ hosts: ['127.0.0.1'], port: zk.port, clock: realClock });
    for (const p of ['/ceph/osds', '/ceph/volumes', '/ceph/snapshots', '/ceph/pools/vms']) await admin.ensurePath(p);
    await admin.write([['/ceph/pools/vms/pgs', '8'], ['/ceph/pools/vms/tier', 'default']]);
    const meta = JSON.parse(await ceph.mustInHost('ceph', ['osd', 'metadata', '--format', 'json'])) as { hostname: string }[];
    node = (meta[0]?.hostname ?? '').split('.')[0] ?? '';
    assert.ok(node, 'the OSD reports its host');
    bridge = await bridgePortIntoNamespace(ceph.hostNs, zk.port);
    cephd = await startService('cephd', [
      ['pvc.node', node],
      // The sample's by-id addresses need a node name ending in digits; the host's name need not.
      ['pvc.system.configuration.networking.cluster.address', 'None'],
      ['pvc.system.configuration.networking.storage.address', 'None'],
      ['pvc.functions.enable_storage', true],
      ['pvc.cluster.coordinators', ['localhost']],
      ['pvc.database', { zookeeper: { port: zk.port } }],
    ], ceph.env, ['ip', 'netns', 'exec', ceph.hostNs]);
    client = rpcClient(cephd.target, CEPHD);
    role = rpcClient(cephd.target, PRIMARY_ROLE);
  });
  after(async () => {
    for (const pid of monPids) process.kill(pid, 'SIGCONT');
    client?.close();
    role?.close();
    await cephd?.cleanup();
    await bridge?.close();
    await admin?.close();
    await zk?.destroy();
    await ceph?.destroy();
  });

  test("not primary: its own OSD is recorded whole (node, device, fsids, the '|' placeholder stats); no stats written", async () => {
    await waitUntil(() => read('/ceph/osds/0/node'), { what: "cephd recording its OSD 0 (/ceph/osds/0/node)", timeoutMs: 30_000, intervalMs: 200, until: (v) => v === node });
    const dump = JSON.parse(await ceph.mustInHost('ceph', ['osd', 'dump', '--format', 'json'])) as { fsid: string; osds: { uuid: string }[] };
    assert.equal(await read('/ceph/osds/0/fsid'), dump.osds[0]?.uuid);
    assert.equal(await read('/ceph/osds/0/fsid/osd'), dump.osds[0]?.uuid);
    assert.equal(await read('/ceph/osds/0/fsid/cluster'), dump.fsid);
    assert.equal(await read('/ceph/osds/0/device'), `${ceph.dir}/osd/ceph-0/block`, 'a file OSD: the bluestore block path');
    assert.deepEqual(await Promise.all(['db_device', 'lvm', 'lvm/vg', 'lvm/lv', 'is_split'].map((k) => read(`/ceph/osds/0/${k}`))), ['', '', '', '', 'False']);
    assert.equal((JSON.parse((await read('/ceph/osds/0/stats')) ?? '{}') as { uuid?: string }).uuid, '|');
    assert.equal(await read('/ceph/stats_state'), undefined, 'secondary: no stats pass');
  });

  test("as primary: /ceph, /ceph/health, /ceph/util, pool and OSD stats with the original's fields, and a fresh state", async (t) => {
    assert.deepEqual(await role.setPrimary({ primary: true, reason: 'takeover' }, { deadlineMs: 2_000 }), { primary: true });
    const s = await waitUntil(state, {
      what: 'a stats pass with nothing stale (/ceph/stats_state)', timeoutMs: 40_000, intervalMs: 250,
      until: (v) => v !== undefined && Object.keys(v.stale).length === 0,
    });
    assert.equal(s?.node, node);
    assert.match((await read('/ceph')) ?? '', /^ {2}cluster:\n {4}id: {5}[0-9a-f-]{36}\n {4}health: HEALTH_/);
    const health = cephHealthJson.decode((await read('/ceph/health')) ?? '', '/ceph/health');
    assert.match(health.status, /^HEALTH_(OK|WARN|ERR)$/);
    assert.match((await read('/ceph/util')) ?? '', /--- RAW STORAGE ---[\s\S]*--- POOLS ---[\s\S]*\nvms +\d/);
    const pool = JSON.parse((await read('/ceph/pools/vms/stats')) ?? '') as Record<string, unknown>;
    assert.deepEqual(Object.keys(pool), [...POOL_STATS_FIELDS]);
    assert.ok(typeof pool.free_bytes === 'number' && pool.free_bytes > 0, JSON.stringify(pool));
    const osd = JSON.parse((await read('/ceph/osds/0/stats')) ?? '') as Record<string, unknown>;
    assert.deepEqual(Object.keys(osd), [...OSD_STATS_FIELDS]);
    assert.deepEqual([osd.up, osd.in, osd.node, osd.class], [1, 1, node, 'hdd']);
    assert.match(String(osd.state), /exists,up/);
    assert.equal(logLines(cephd, /^Ceph client \(lock flushes, osd down, stats\): librados\/librbd in process$/).length, 1, 'the stats\' ceph commands went through librados');
    const passes = logLines(cephd, /^storage stats pass$/).length;
    t.diagnostic(`one-host Ceph up in ${ceph.startMs} ms; stats state ${JSON.stringify(s)}; pool stats ${JSON.stringify(pool)}; ${passes} pass line(s) logged`);
  });

  test('monitor stopped: the stats go stale (values kept), GetStorageStats answers within 1 s; resumed: current again', async (t) => {
    const healthBefore = await read('/ceph/health');
    const statusBefore = await read('/ceph');
    monPids = await pidsOf(ceph.hostNs, 'ceph-mon');
    assert.equal(monPids.length, 1, 'one ceph-mon in the host namespace');
    for (const pid of monPids) process.kill(pid, 'SIGSTOP');
    const latencies: number[] = [];
    const stale = await waitUntil(async () => {
      const t0 = realClock.now();
      assert.deepEqual(await client.getStorageStats({}, { deadlineMs: 1_000 }), { enabled: true, osdCount: 1 });
      latencies.push(realClock.now() - t0);
      return state();
    }, {
      what: 'status, health and util marked stale in /ceph/stats_state', timeoutMs: 30_000, intervalMs: 200,
      until: (v) => v !== undefined && ['status', 'health', 'util'].every((k) => k in v.stale),
    });
    assert.match(stale?.stale.health ?? '', /timed out after 3000 ms/);
    assert.ok(stale?.stale_since !== null);
    assert.equal(await read('/ceph/health'), healthBefore, 'the last health is kept');
    assert.equal(await read('/ceph'), statusBefore, 'the last status is kept');
    t.diagnostic(`GetStorageStats while Ceph hangs: ${latencies.length} calls, max ${Math.max(...latencies)} ms`);
    assert.ok(Math.max(...latencies) < 1_000);
    for (const pid of monPids) process.kill(pid, 'SIGCONT');
    monPids = [];
    await waitUntil(state, {
      what: 'the stats current again after SIGCONT', timeoutMs: 60_000, intervalMs: 250,
      until: (v) => v !== undefined && Object.keys(v.stale).length === 0,
    });
    await waitUntil(() => logLines(cephd, /^storage stats current again$/), { what: "cephd's recovery log line", until: (l) => l.length === 1 });
    assert.equal(logLines(cephd, /^storage stats stale/).length, 1, 'the stale episode logged once');
  });

  test('relinquish: the passes stop', async () => {
    assert.deepEqual(await role.setPrimary({ primary: false, reason: 'relinquish' }, { deadlineMs: 5_000 }), { primary: false });
    await waitUntil(() => logLines(cephd, /^storage stats: stopped$/), { what: "cephd's 'storage stats: stopped' line", until: (l) => l.length === 1 });
    const before = (await state())?.time;
    await realClock.sleep(11_000); // two intervals and more: no pass may write
    assert.equal((await state())?.time, before);
    assert.equal(await cephd.stop(), 0, cephd.output());
  });
});
