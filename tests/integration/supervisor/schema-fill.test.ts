// The start-up fill of missing schema keys (the original's schema validation, start-up step 7) by
// the real supervisor process against a real Zookeeper: it waits for a kazoo-style ReadLock on
// /schema/version (a Python daemon's leftover from a hot schema update), then creates every absent
// key of every node, VM, network, OSD and pool with the original's default, one log line per key,
// before registering; existing values stay; a second start fills nothing.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { realClock } from '@pvc/runtime';
import { newDomainObject, newNetworkObject, newNodeObject, paths, ReadLock, type ZkClient } from '@pvc/zk';
import { waitFor } from '../../cluster/harness/index.js';
import { freePort } from '../../support/ports.js';
import { spawnSupervisor, supervisorConfig, type SupervisorProcess, tempDir, useZkTree } from './support.js';

const UUID = '5d0c2c7e-8f4a-4b1e-9c3d-7a6b5c4d3e2f';
const n = paths.node('hv5');
const vm = paths.domain(UUID);
const net = paths.network(1000);
const osd = paths.ceph.osd(7);
const pool = paths.ceph.pool('vms');

/** Existing objects, each lacking some keys. */
async function seed(c: ZkClient): Promise<void> {
  const node = newNodeObject({ name: 'hv5', daemonMode: 'hypervisor', nowMs: 1_000_000, staticData: '2 k os arch', pvcVersion: '1.0.3', ipmi: { hostname: 'x', username: 'y', password: 'z' } });
  const dom = newDomainObject({ uuid: UUID, name: 'db1', xml: '<domain/>', node: 'hv5', nodeLimit: ['hv5'] });
  const network = newNetworkObject({ vni: 1000, description: 'clients', type: 'managed' });
  for (const o of [node, dom, network]) await c.createObject(o.root, o.entries);
  await c.write([[n.domainState, 'ready'], [n.daemonState, 'stop']]);
  for (const p of [n.memProv, n.networkStats, n.monitoringHealth, vm.migrationMaxDowntime, vm.nodeLimit, net.firewallIn]) await c.delete(p);
  await c.ensurePath(osd.node);
  await c.set(osd.node, 'hv5');
  await c.ensurePath(pool.pgs);
  await c.set(pool.pgs, '64');
}

const FILLED: Record<string, string> = {
  [n.memProv]: '', [n.networkStats]: '', [n.monitoringHealth]: '',
  [vm.migrationMaxDowntime]: '300', [vm.nodeLimit]: '',
  [net.firewallIn]: '',
  [osd.isSplit]: 'False', [osd.device]: '', [osd.dbDevice]: '', [osd.fsid]: '', [osd.fsidOsd]: '', [osd.fsidCluster]: '',
  [osd.lvm]: '', [osd.lvmVg]: '', [osd.lvmLv]: '', [osd.stats]: '',
  [pool.tier]: 'default', [pool.stats]: '',
};

async function stopped(sup: SupervisorProcess): Promise<void> {
  sup.child.kill('SIGTERM');
  assert.equal(await sup.exited, 0, sup.output().slice(-3000));
}

describe('supervisor start-up fill of missing schema keys (real Zookeeper)', () => {
  const tree = useZkTree(seed);

  test('waits for the schema lock, fills every missing key once with the default, then registers; a restart fills nothing', { timeout: 120_000 }, async () => {
    const tmp = tempDir('pvc-sup-fill-');
    const cfg = supervisorConfig(tmp.dir, tree.server.port, await freePort(), [['pvc.node', 'hv5']]);
    const reader = new ReadLock(tree.client, paths.schema.version, { clock: realClock });
    assert.ok(await reader.acquire({ timeoutMs: 5_000 }));
    let sup = spawnSupervisor(cfg, ['--mode', 'systemd']);
    try {
      // The supervisor's WriteLock contender queues behind our read lock; nothing is filled yet.
      await waitFor('the supervisor contending for /schema/version', 30_000, async () =>
        (await tree.client.children(paths.schema.version)).some((c) => c.includes('__lock__')) ? true : undefined, 20);
      assert.equal(await tree.client.exists(vm.migrationMaxDowntime), undefined, 'filled while a read lock was held');
      assert.ok(!sup.lines().some((l) => String(l.msg).startsWith('node present')), 'registered while a read lock was held');
      await reader.release();

      await waitFor('hv5 init', 30_000, async () => ((await tree.client.read(n.daemonState)) === 'init' ? true : undefined), 20);
      for (const [path, value] of Object.entries(FILLED)) assert.equal(await tree.client.read(path), value, path);
      assert.equal(await tree.client.read(n.domainState), 'ready', 'existing values untouched');
      assert.equal(await tree.client.read(osd.node), 'hv5');
      assert.equal(await tree.client.read(pool.pgs), '64');
      assert.equal(await tree.client.read(vm.node), 'hv5');
      const s = sup;
      const logged = await waitFor('the fill log lines', 10_000, async () => {
        const l = s.lines().filter((x) => String(x.msg).startsWith('filled missing key'));
        return l.length >= Object.keys(FILLED).length ? l : undefined;
      }, 20);
      assert.deepEqual(logged.map((l) => l.key).sort(), Object.keys(FILLED).sort(), 'one line per filled key');
      assert.ok(logged.every((l) => l.component === 'schema' && l.level === 30));
      assert.deepEqual(await tree.client.children(paths.schema.version), [], 'the lock was released');
      await stopped(sup);

      sup = spawnSupervisor(cfg, ['--mode', 'systemd']);
      const again = sup;
      await waitFor('second start registered', 30_000, async () => (again.lines().some((l) => String(l.msg).startsWith('node present')) ? true : undefined), 20);
      assert.ok(again.lines().some((l) => l.msg === 'schema checked: no key missing'));
      assert.ok(!again.lines().some((l) => String(l.msg).startsWith('filled missing key')));
      await stopped(again);
    } finally {
      if (reader.held) await reader.release();
      if (sup.child.exitCode === null) sup.child.kill('SIGKILL');
      tmp.remove();
    }
  });
});
