import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeRbdLocks } from './fake-rbd-locks.js';
import { heldReason, RbdStartGuard } from './start-guard.js';

describe('RbdStartGuard (lock flush before a start, fake cephd)', () => {
  it('no RBD volumes: go without asking cephd', async () => {
    const locks = new FakeRbdLocks();
    assert.deepEqual(await new RbdStartGuard(locks).beforeStart('u1', []), { kind: 'go' });
    assert.deepEqual(locks.calls, []);
  });

  it('flushes the listed images, then go', async () => {
    const locks = new FakeRbdLocks();
    assert.deepEqual(await new RbdStartGuard(locks).beforeStart('u1', ['vms/a', 'vms/b']), { kind: 'go' });
    assert.deepEqual(locks.calls, [['vms/a', 'vms/b']]);
  });

  it('cephd unreachable: retry twice, then fail with the reason; the count is per VM', async () => {
    const locks = new FakeRbdLocks();
    locks.error = new Error('14 UNAVAILABLE: No connection established');
    const guard = new RbdStartGuard(locks, { maxFailures: 3 });
    assert.deepEqual(await guard.beforeStart('u1', ['vms/a']), { kind: 'retry', attempt: 1, reason: 'cephd FlushLocks failed: 14 UNAVAILABLE: No connection established' });
    assert.equal((await guard.beforeStart('u2', ['vms/z'])).kind, 'retry');
    assert.equal((await guard.beforeStart('u1', ['vms/a'])).kind, 'retry');
    assert.deepEqual(await guard.beforeStart('u1', ['vms/a']), {
      kind: 'fail', reason: 'Could not safely free RBD locks (3 attempts): cephd FlushLocks failed: 14 UNAVAILABLE: No connection established',
    });
    // After a fail the count starts over (a VM set back to start gets its attempts again).
    assert.deepEqual(await guard.beforeStart('u1', ['vms/a']), { kind: 'retry', attempt: 1, reason: 'cephd FlushLocks failed: 14 UNAVAILABLE: No connection established' });
  });

  it('an image cephd could not read or free (transient) counts as a failure naming it; a success resets the count', async () => {
    const locks = new FakeRbdLocks();
    locks.failing.add('vms/b');
    const guard = new RbdStartGuard(locks, { maxFailures: 2 });
    assert.deepEqual(await guard.beforeStart('u1', ['vms/a', 'vms/b']), { kind: 'retry', attempt: 1, reason: 'cephd could not free RBD locks: vms/b: rbd lock list failed: timed out' });
    locks.failing.clear();
    assert.deepEqual(await guard.beforeStart('u1', ['vms/a', 'vms/b']), { kind: 'go' });
    locks.failing.add('vms/a');
    assert.deepEqual(await guard.beforeStart('u1', ['vms/a']), { kind: 'retry', attempt: 1, reason: 'cephd could not free RBD locks: vms/a: rbd lock list failed: timed out' });
    assert.deepEqual(await guard.beforeStart('u1', ['vms/a']), { kind: 'fail', reason: 'Could not safely free RBD locks (2 attempts): cephd could not free RBD locks: vms/a: rbd lock list failed: timed out' });
  });
  it('a lock held by another node fails at once (no retries), naming the holder, even beside a transient failure', async () => {
    const locks = new FakeRbdLocks();
    locks.heldBy.set('vms/b', { locker: 'client.4131', address: '10.254.0.2:0/2207004162' });
    locks.failing.add('vms/a');
    const guard = new RbdStartGuard(locks, { maxFailures: 3 });
    const v = await guard.beforeStart('u1', ['vms/a', 'vms/b']);
    assert.equal(v.kind, 'fail');
    assert.equal(v.kind === 'fail' ? v.reason : '', heldReason([{ image: 'vms/b', lockId: 'auto 1', locker: 'client.4131', address: '10.254.0.2:0/2207004162' }]));
    assert.match(v.kind === 'fail' ? v.reason : '', /^Could not safely free RBD locks: vms\/b held by client\.4131 at 10\.254\.0\.2:0\/2207004162 \(lock "auto 1"\), not this node; /);
    assert.equal(locks.calls.length, 1);
    // The count was not advanced: once the holder is gone, a transient failure starts at attempt 1.
    locks.heldBy.clear();
    assert.deepEqual(await guard.beforeStart('u1', ['vms/a']), { kind: 'retry', attempt: 1, reason: 'cephd could not free RBD locks: vms/a: rbd lock list failed: timed out' });
  });

  it('passes the deadline to cephd (default 30 s)', async () => {
    const seen: number[] = [];
    const locks = { flush: (images: readonly string[], o: { deadlineMs: number }) => (seen.push(o.deadlineMs), Promise.resolve({ flushed: [...images], failed: [], held: [] })), close: () => undefined };
    await new RbdStartGuard(locks).beforeStart('u1', ['vms/a']);
    await new RbdStartGuard(locks, { deadlineMs: 500 }).beforeStart('u1', ['vms/a']);
    assert.deepEqual(seen, [30_000, 500]);
  });
});
