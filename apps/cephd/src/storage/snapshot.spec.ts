import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StorageRequest } from '@pvc/zk';
import { carryOutRecord } from './carry-out.js';
import { storageRig, type StorageRig } from './rig.js';

const run = (rig: StorageRig, request: StorageRequest) => carryOutRecord(rig.io, { request, client: 'spec' });
const snap = (op: 'snapshot.add' | 'snapshot.remove' | 'snapshot.rollback', snapshot = 's1'): StorageRequest => ({ op, pool: 'p1', volume: 'd0', snapshot });
const count = (rig: StorageRig): unknown => (JSON.parse(rig.dump()['/ceph/volumes/p1/d0/stats'] ?? '{}') as { snapshot_count?: number }).snapshot_count;

async function withVolume(): Promise<StorageRig> {
  const rig = await storageRig();
  await run(rig, { op: 'pool.add', pool: 'p1', pgs: 8, tier: 'default', copies: 2, minCopies: 1 });
  assert.equal((await run(rig, { op: 'volume.add', pool: 'p1', volume: 'd0', sizeBytes: 4096, force: false })).ok, true);
  return rig;
}

describe('snapshots', () => {
  it('add: rbd snap create, its object (stats = rbd info of the snapshot), the volume\'s snapshot_count + 1', async () => {
    const rig = await withVolume();
    const n = rig.commands().length;
    assert.deepEqual(await run(rig, snap('snapshot.add')), { ok: true, message: 'Created RBD snapshot "s1" of volume "p1/d0"' });
    assert.deepEqual(rig.commands().slice(n), ['rbd snap create p1/d0@s1', 'rbd info p1/d0@s1']);
    assert.equal(rig.dump()['/ceph/snapshots/p1/d0/s1'], '');
    assert.equal((JSON.parse(rig.dump()['/ceph/snapshots/p1/d0/s1/stats'] ?? '') as { protected?: string }).protected, 'false');
    assert.equal(count(rig), 1);
    await run(rig, snap('snapshot.add', 's2'));
    assert.equal(count(rig), 2);
  });

  it('remove: rbd snap rm, its object, snapshot_count − 1; rollback: rbd snap rollback, nothing in Zookeeper', async () => {
    const rig = await withVolume();
    await run(rig, snap('snapshot.add'));
    const before = rig.dump();
    assert.deepEqual(await run(rig, snap('snapshot.rollback')), { ok: true, message: 'Rolled back RBD volume "p1/d0" to snapshot "s1"' });
    assert.equal(rig.commands().at(-1), 'rbd snap rollback p1/d0@s1');
    assert.deepEqual(rig.dump(), before);
    assert.deepEqual(await run(rig, snap('snapshot.remove')), { ok: true, message: 'Removed RBD snapshot "s1" of volume "p1/d0"' });
    assert.equal(rig.commands().at(-1), 'rbd snap rm p1/d0@s1');
    assert.equal(rig.dump()['/ceph/snapshots/p1/d0/s1'], undefined);
    assert.equal(count(rig), 0);
  });

  it('refusals: an existing snapshot, an unknown one, an unknown volume', async () => {
    const rig = await withVolume();
    await run(rig, snap('snapshot.add'));
    assert.deepEqual(await run(rig, snap('snapshot.add')), { ok: false, message: 'snapshot "s1" of volume "p1/d0" already exists' });
    assert.deepEqual(await run(rig, snap('snapshot.rollback', 'nope')), { ok: false, message: 'no snapshot "nope" of volume "p1/d0"' });
    assert.deepEqual(await run(rig, { ...snap('snapshot.remove'), volume: 'dx' } as StorageRequest), { ok: false, message: 'no volume "dx" in pool "p1"' });
  });

  it('the Zookeeper write failing after rbd snap create: the snapshot is removed again', async () => {
    const rig = await withVolume();
    rig.server.failNextWrite({ code: 'CONNECTION_LOSS' });
    const r = await run(rig, snap('snapshot.add'));
    assert.match(r.message, /\(while writing to Zookeeper; undone: snapshot "p1\/d0@s1" removed\)$/);
    assert.equal(rig.ceph.images.get('p1/d0')?.snaps.size, 0);
    assert.equal(rig.dump()['/ceph/snapshots/p1/d0/s1'], undefined);
    assert.equal(count(rig), 0);
  });

  it('a snapshot already gone in Ceph is removed from Zookeeper', async () => {
    const rig = await withVolume();
    await run(rig, snap('snapshot.add'));
    rig.ceph.images.get('p1/d0')?.snaps.clear();
    assert.equal((await run(rig, snap('snapshot.remove'))).ok, true);
    assert.equal(rig.dump()['/ceph/snapshots/p1/d0/s1'], undefined);
  });
});
