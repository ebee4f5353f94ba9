import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { newDomainObject, paths } from '@pvc/zk';
import { Reconciler } from '../reconciler.js';
import { testXml, unitRig } from '../testing.js';
import { FakeRbdLocks } from './fake-rbd-locks.js';
import { heldReason, RbdStartGuard } from './start-guard.js';

const U1 = '11111111-0000-0000-0000-0000000000b1';

/** The unit rig plus one vmd on hv1 whose starts go through an RBD guard over `locks`. */
async function rbdRig(rbdList: string[], locks = new FakeRbdLocks()) {
  const rig = await unitRig();
  const d = newDomainObject({ uuid: U1, name: 'vm1', xml: testXml('vm1', U1), node: 'hv1', state: 'start', rbdList });
  await rig.admin.createObject(d.root, d.entries);
  const zk = await rig.server.connect();
  const ac = new AbortController();
  const r = new Reconciler({
    zk, hv: rig.hv, clock: rig.clock, logger: rig.logger, node: 'hv1', domainType: 'qemu', shutdownTimeoutMs: 10_000,
    resyncMs: 2000, statsIntervalMs: 5000, rbd: new RbdStartGuard(locks, { maxFailures: 3 }),
  });
  const running = r.run(ac.signal);
  const stop = async (): Promise<void> => {
    ac.abort();
    await rig.clock.advance(10);
    await running;
    await zk.close();
    await rig.stop();
  };
  return { ...rig, locks, stop };
}

describe('vmd flushes a VM\'s RBD locks through cephd before starting it (fake cephd)', () => {
  it('rbdlist set: FlushLocks with those images, then the start', async () => {
    const rig = await rbdRig(['vms/vm1_disk0', 'vms/vm1_disk1']);
    await rig.settle();
    assert.deepEqual(rig.locks.calls, [['vms/vm1_disk0', 'vms/vm1_disk1']]);
    assert.equal(rig.hv.isRunning(U1), true);
    await rig.settle(10_000);
    assert.equal(rig.locks.calls.length, 1, 'a running VM is not flushed again');
    await rig.stop();
  });

  it('empty rbdlist: cephd is not asked', async () => {
    const rig = await rbdRig([]);
    await rig.settle();
    assert.deepEqual(rig.locks.calls, []);
    assert.equal(rig.hv.isRunning(U1), true);
    await rig.stop();
  });

  it('a lock held by another node: state fail at once with a failedreason naming the holder; never started, no retries', async () => {
    const locks = new FakeRbdLocks();
    locks.heldBy.set('vms/vm1_disk0', { locker: 'client.4131', address: '10.254.0.2:0/2207004162' });
    const rig = await rbdRig(['vms/vm1_disk0'], locks);
    await rig.settle(1000);
    const p = paths.domain(U1);
    assert.equal(await rig.admin.read(p.state), 'fail');
    assert.equal(await rig.admin.read(p.failedReason), heldReason([{ image: 'vms/vm1_disk0', lockId: 'auto 1', locker: 'client.4131', address: '10.254.0.2:0/2207004162' }]));
    assert.match((await rig.admin.read(p.failedReason)) ?? '', /vms\/vm1_disk0 held by client\.4131 at 10\.254\.0\.2:0\/2207004162/);
    assert.equal(rig.locks.calls.length, 1, 'one flush, no retries');
    assert.equal(rig.hv.creates.get(U1), undefined, 'never started');
    const line = rig.lines.find((l) => l.msg === 'VM not started: another node holds an RBD lock; state fail');
    assert.equal(line?.vm, 'vm1');
    await rig.settle(10_000);
    assert.equal(rig.locks.calls.length, 1, 'a failed VM is not flushed again');
    await rig.stop();
  });
  it('cephd down: no start, a log line per attempt naming it (retried after 1 s, 2 s); after 3 fail + failedreason; later a start works', async () => {
    const locks = new FakeRbdLocks();
    locks.error = new Error('14 UNAVAILABLE: No connection established');
    const rig = await rbdRig(['vms/vm1_disk0'], locks);
    await rig.settle(1000);
    assert.equal(rig.hv.isRunning(U1), false);
    const first = rig.lines.find((l) => typeof l.err === 'string' && l.err.includes('RBD lock flush before start failed'));
    assert.equal(first?.err, 'RBD lock flush before start failed (attempt 1 of 3): cephd FlushLocks failed: 14 UNAVAILABLE: No connection established; start not attempted, retried after a growing delay');
    assert.equal(first?.vm, 'vm1');
    assert.equal(await rig.admin.read(paths.domain(U1).state), 'start', 'still start after one failure');
    await rig.settle(10_000);
    const p = paths.domain(U1);
    assert.equal(await rig.admin.read(p.state), 'fail');
    assert.equal(await rig.admin.read(p.failedReason), 'Could not safely free RBD locks (3 attempts): cephd FlushLocks failed: 14 UNAVAILABLE: No connection established');
    assert.equal(rig.locks.calls.length, 3);
    assert.equal(rig.hv.creates.get(U1), undefined, 'never started');
    assert.deepEqual(rig.lines.filter((l) => /^vm-start: gave up/.test(String(l.msg))).map((l) => [l.vm, l.err]),
      [['vm1', 'Could not safely free RBD locks (3 attempts): cephd FlushLocks failed: 14 UNAVAILABLE: No connection established']], 'the queue\'s terminal outcome');
    assert.equal(rig.lines.filter((l) => /^vm-start: works again/.test(String(l.msg))).length, 0);
    locks.error = undefined;
    await rig.admin.write([[p.state, 'start']]);
    await rig.settle();
    assert.equal(rig.hv.isRunning(U1), true);
    assert.equal(await rig.admin.read(p.failedReason), '');
    await rig.stop();
  });

  it('a start withdrawn after failed flushes loses their count: the next `pvc vm start` gets its own 3 attempts', async () => {
    const locks = new FakeRbdLocks();
    locks.error = new Error('14 UNAVAILABLE: No connection established');
    const rig = await rbdRig(['vms/vm1_disk0'], locks);
    const attempts = (): (string | undefined)[] => rig.lines
      .map((l) => (typeof l.err === 'string' ? /RBD lock flush before start failed \((attempt \d of 3)\)/.exec(l.err)?.[1] : undefined))
      .filter((x) => x !== undefined);
    const p = paths.domain(U1);
    // Attempt 1 at once, attempt 2 after the queue's 1 s; the third would come 2 s later.
    const end = rig.clock.now() + 5_000;
    while (attempts().length < 2 && rig.clock.now() < end) await rig.clock.advance(50);
    assert.deepEqual(attempts(), ['attempt 1 of 3', 'attempt 2 of 3']);
    await rig.admin.write([[p.state, 'stop']]);
    await rig.settle(1000);
    assert.equal(await rig.admin.read(p.state), 'stop');
    const before = rig.locks.calls.length;
    await rig.admin.write([[p.state, 'start']]);
    const end2 = rig.clock.now() + 5_000;
    while (rig.locks.calls.length === before && rig.clock.now() < end2) await rig.clock.advance(50);
    await rig.clock.advance(100);
    assert.equal(await rig.admin.read(p.state), 'start', 'one failed flush of the new start does not fail the VM');
    assert.deepEqual(attempts().slice(-1), ['attempt 1 of 3'], 'the new start counts from 1');
    await rig.stop();
  });
});
