import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeExec, VirtualClock, silentLogger } from '@pvc/runtime';
import { newDomainObject, newNodeObject, paths } from '@pvc/zk';
import { FakeZkServer } from '@pvc/zk/testing';
import { FakeHypervisor } from '../host/fake-hypervisor.js';
import { createVirshMigrator, peerAddress } from '../host/virsh-migrate.js';
import { Reconciler } from '../reconciler.js';
import { testXml } from '../testing.js';
import { DEFAULT_TIMINGS } from './deps.js';
import { MigrationTracker } from './tracker.js';

const U = 'cccccccc-0000-4000-8000-000000000001';

/** Two vmds (hv1, hv2) on one fake ZK, each with its fake libvirt; virsh migrate moves the domain. */
async function twoNodes(migrateOk: boolean) {
  const clock = new VirtualClock(1_700_000_000_000);
  const server = new FakeZkServer({ clock });
  const admin = await server.connect();
  for (const p of [paths.nodes, paths.domains]) await admin.ensurePath(p);
  const hvs = { hv1: new FakeHypervisor({ clock }), hv2: new FakeHypervisor({ clock }) };
  const exec = new FakeExec();
  exec.on('virsh', { exitCode: 0 });
  exec.on('virsh -c qemu+tcp://hv1/system migrate ', () => {
    if (!migrateOk) return { exitCode: 1, stdout: '', stderr: 'error: unable to connect to server at \'hv2:16509\': Connection refused\n' };
    hvs.hv1.vanish(U);
    hvs.hv2.addRunning(U, 'vm1');
    return { exitCode: 0, stdout: '', stderr: '' };
  });
  const ac = new AbortController();
  const runs: Promise<void>[] = [];
  for (const name of ['hv1', 'hv2'] as const) {
    const n = newNodeObject({ name, daemonMode: 'hypervisor', nowMs: clock.now(), staticData: '2 6.1 debian x86_64', pvcVersion: '0', ipmi: { hostname: '', username: '', password: '' } });
    await admin.createObject(n.root, n.entries);
    await admin.write([[paths.node(name).domainState, 'ready'], [paths.node(name).daemonState, 'run']]);
    const zk = await server.connect();
    const uri = `qemu+tcp://${name}/system`;
    const migrations = new MigrationTracker({
      zk, hv: hvs[name], clock, logger: silentLogger(), node: name, migrator: createVirshMigrator(exec, uri),
      peer: (t) => peerAddress(uri, name, t), shutdownTimeoutMs: 10_000, timings: DEFAULT_TIMINGS,
    });
    const r = new Reconciler({ zk, hv: hvs[name], clock, logger: silentLogger(), node: name, domainType: 'qemu', shutdownTimeoutMs: 10_000, statsIntervalMs: 5000, migrations });
    migrations.onDone = () => r.trigger();
    runs.push(r.run(ac.signal).finally(() => zk.close()));
  }
  const d = newDomainObject({ uuid: U, name: 'vm1', xml: testXml('vm1', U), node: 'hv1', state: 'start' });
  await admin.createObject(d.root, d.entries);
  const read = (k: 'state' | 'node' | 'lastNode') => admin.read(paths.domain(U)[k]);
  const stop = async () => {
    ac.abort();
    await clock.advance(10);
    await Promise.all(runs);
    await admin.close();
  };
  return { clock, admin, hvs, exec, read, stop };
}

describe('migration through two reconcilers (plan → apply → background jobs)', () => {
  it('pvc vm migrate keys → runs on hv2 only, start, lastnode hv1; never on both at any 100 ms step', async () => {
    const r = await twoNodes(true);
    await r.clock.advance(3000);
    assert.equal(r.hvs.hv1.isRunning(U), true);
    await r.admin.write([[paths.domain(U).state, 'migrate'], [paths.domain(U).node, 'hv2'], [paths.domain(U).lastNode, 'hv1']]);
    for (let i = 0; i < 100; i++) {
      await r.clock.advance(100);
      assert.ok(!(r.hvs.hv1.isRunning(U) && r.hvs.hv2.isRunning(U)), 'on both hosts');
      assert.ok(r.hvs.hv1.isRunning(U) || r.hvs.hv2.isRunning(U), 'on neither host');
    }
    assert.deepEqual([await r.read('state'), await r.read('node'), await r.read('lastNode')], ['start', 'hv2', 'hv1']);
    assert.equal(r.hvs.hv2.isRunning(U), true);
    assert.equal(r.hvs.hv2.creates.get(U), undefined, 'arrived by migration, not started afresh');
    await r.stop();
  });

  it('migrate-live to a target that refuses → stays on hv1 (start, node hv1), never started on hv2', async () => {
    const r = await twoNodes(false);
    await r.clock.advance(3000);
    await r.admin.write([[paths.domain(U).state, 'migrate-live'], [paths.domain(U).node, 'hv2'], [paths.domain(U).lastNode, 'hv1']]);
    for (let i = 0; i < 100; i++) await r.clock.advance(100);
    assert.deepEqual([await r.read('state'), await r.read('node')], ['start', 'hv1']);
    assert.equal(r.hvs.hv1.isRunning(U), true);
    assert.equal(r.hvs.hv2.isRunning(U), false);
    assert.equal(r.exec.lines().filter((l) => l.includes(' migrate --live')).length, 3);
    await r.stop();
  });
});
