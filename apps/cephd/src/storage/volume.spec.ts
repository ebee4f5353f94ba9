import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StorageRequest } from '@pvc/zk';
import { carryOutRecord } from './carry-out.js';
import { sizeGuard } from './guard.js';
import { storageRig, type StorageRig } from './rig.js';

const GiB = 1024 ** 3;
const run = (rig: StorageRig, request: StorageRequest) => carryOutRecord(rig.io, { request, client: 'spec' });
const vadd = (volume: string, sizeBytes = GiB, force = false): StorageRequest => ({ op: 'volume.add', pool: 'p1', volume, sizeBytes, force });

async function withPool(): Promise<StorageRig> {
  const rig = await storageRig();
  assert.equal((await run(rig, { op: 'pool.add', pool: 'p1', pgs: 8, tier: 'default', copies: 2, minCopies: 1 })).ok, true);
  return rig;
}

const volumeKeys = (rig: StorageRig): string[] => Object.keys(rig.dump()).filter((k) => /^\/ceph\/(volumes|snapshots)\/p1\//.test(k)).sort();

describe('size guards (the original\'s: below the free space; below 80 % full unless forced)', () => {
  const df = { freeBytes: 100, usedBytes: 0 };
  it('refuses a volume not smaller than the free space, even forced', () => {
    assert.match(sizeGuard(100, df, true) ?? '', /^the requested volume size 100B is not smaller than the free space in the pool \(100B\)$/);
  });
  it('refuses one that fills the pool past 80 % unless forced', () => {
    assert.equal(sizeGuard(79, df, false), undefined);
    assert.match(sizeGuard(80, df, false) ?? '', /not smaller than the safe free space in the pool \(80B for 80% full\); retry with --force/);
    assert.equal(sizeGuard(80, df, true), undefined);
    assert.match(sizeGuard(30, { freeBytes: 50, usedBytes: 50 }, false) ?? '', /\(30B for 80% full\)/, 'used counts against the 80 %');
  });
});

describe('volume add', () => {
  it('rbd create --size <bytes>B, then the object: stats = rbd info, and its snapshot parent', async () => {
    const rig = await withPool();
    const n = rig.commands().length;
    assert.deepEqual(await run(rig, vadd('d0')), { ok: true, message: 'Created RBD volume "p1/d0" of size 1024M' });
    assert.deepEqual(rig.commands().slice(n), ['ceph df', 'rbd create --size 1073741824B p1/d0', 'rbd info p1/d0']);
    const d = rig.dump();
    assert.equal(d['/ceph/volumes/p1/d0'], '');
    assert.deepEqual(JSON.parse(d['/ceph/volumes/p1/d0/stats'] ?? ''), { name: 'd0', size: GiB, objects: 256, order: 22, snapshot_count: 0, format: 2 });
    assert.equal(d['/ceph/snapshots/p1/d0'], '');
  });

  it('the guards read ceph df at request time: too large refused, 80 % refused unless --force', async () => {
    const rig = await withPool();
    rig.ceph.df = { maxAvail: 10 * GiB, bytesUsed: 0 };
    assert.deepEqual(await run(rig, vadd('big', 10 * GiB)), { ok: false, message: 'the requested volume size 10G is not smaller than the free space in the pool (10G)' });
    const r = await run(rig, vadd('d80', 9 * GiB));
    assert.equal(r.message, 'the requested volume size 9216M is not smaller than the safe free space in the pool (8192M for 80% full); retry with --force to ignore this');
    assert.ok(!rig.commands().some((c) => c.startsWith('rbd create')), 'nothing created');
    assert.equal((await run(rig, vadd('d80', 9 * GiB, true))).ok, true);
  });

  it('a name rbd refuses: rbd\'s own message (no log noise), nothing in Zookeeper', async () => {
    const rig = await withPool();
    const r = await run(rig, vadd('x'.repeat(120)));
    assert.deepEqual(r, { ok: false, message: `rbd: create error: (36) File name too long (while creating volume "p1/${'x'.repeat(120)}")` });
    assert.deepEqual(volumeKeys(rig), []);
  });

  it('rbd info or the Zookeeper write failing after the create: the image is removed again', async () => {
    const rig = await withPool();
    rig.exec.on('rbd info', { exitCode: 2, stderr: 'rbd: error opening image d0: (108) Cannot send after transport endpoint shutdown\n' });
    const r = await run(rig, vadd('d0'));
    assert.equal(r.message, 'rbd: error opening image d0: (108) Cannot send after transport endpoint shutdown (while reading the result; undone: volume "p1/d0" removed)');
    assert.equal(rig.ceph.images.size, 0);
    const rig2 = await withPool();
    rig2.server.failNextWrite({ code: 'CONNECTION_LOSS' });
    assert.match((await run(rig2, vadd('d0'))).message, /while writing to Zookeeper; undone: volume "p1\/d0" removed\)$/);
    assert.equal(rig2.ceph.images.size, 0);
    assert.deepEqual(volumeKeys(rig2), []);
  });

  it('refused without running anything: unknown pool, existing volume', async () => {
    const rig = await withPool();
    await run(rig, vadd('d0'));
    assert.deepEqual(await run(rig, { ...vadd('d0'), pool: 'nope' } as StorageRequest), { ok: false, message: 'no pool "nope" in the cluster' });
    assert.deepEqual(await run(rig, vadd('d0')), { ok: false, message: 'volume "d0" already exists in pool "p1"' });
  });
});

describe('volume resize, rename, clone, remove', () => {
  it('resize: rbd resize, stats from rbd info; shrinking is refused by rbd with its message', async () => {
    const rig = await withPool();
    await run(rig, vadd('d0'));
    assert.deepEqual(await run(rig, { op: 'volume.resize', pool: 'p1', volume: 'd0', sizeBytes: 2 * GiB, force: false }), { ok: true, message: 'Resized RBD volume "p1/d0" to size 2048M' });
    assert.equal(JSON.parse(rig.dump()['/ceph/volumes/p1/d0/stats'] ?? '').size, 2 * GiB);
    const r = await run(rig, { op: 'volume.resize', pool: 'p1', volume: 'd0', sizeBytes: GiB, force: false });
    assert.equal(r.message, 'rbd: shrinking an image is only allowed with the --allow-shrink flag (while resizing volume "p1/d0")');
  });

  it('resize whose stats cannot be written: resized back', async () => {
    const rig = await withPool();
    await run(rig, vadd('d0'));
    rig.server.failNextWrite({ code: 'CONNECTION_LOSS' });
    const r = await run(rig, { op: 'volume.resize', pool: 'p1', volume: 'd0', sizeBytes: 2 * GiB, force: false });
    assert.match(r.message, /\(while writing to Zookeeper; undone: volume "p1\/d0" resized back to 1024M\)$/);
    assert.equal(rig.ceph.images.get('p1/d0')?.size, GiB);
  });

  it('rename moves the object and its snapshots; a failure after rbd rename renames it back', async () => {
    const rig = await withPool();
    await run(rig, vadd('d0'));
    await run(rig, { op: 'snapshot.add', pool: 'p1', volume: 'd0', snapshot: 's1' });
    const snapStats = rig.dump()['/ceph/snapshots/p1/d0/s1/stats'];
    assert.deepEqual(await run(rig, { op: 'volume.rename', pool: 'p1', volume: 'd0', newName: 'd1' }), { ok: true, message: 'Renamed RBD volume "d0" to "d1" in pool "p1"' });
    assert.deepEqual(volumeKeys(rig), ['/ceph/snapshots/p1/d1', '/ceph/snapshots/p1/d1/s1', '/ceph/snapshots/p1/d1/s1/stats', '/ceph/volumes/p1/d1', '/ceph/volumes/p1/d1/stats']);
    assert.equal(rig.dump()['/ceph/snapshots/p1/d1/s1/stats'], snapStats);
    rig.exec.on('rbd info p1/d2', { exitCode: 2, stderr: 'rbd: error opening image d2: (2) No such file or directory\n' });
    const r = await run(rig, { op: 'volume.rename', pool: 'p1', volume: 'd1', newName: 'd2' });
    assert.match(r.message, /\(while reading the result; undone: volume renamed back to "p1\/d1"\)$/);
    assert.deepEqual([...rig.ceph.images.keys()], ['p1/d1']);
  });

  it('clone: guarded by the source\'s size in Ceph; rbd copy and a new object', async () => {
    const rig = await withPool();
    await run(rig, vadd('d0', 6 * GiB, true));
    rig.ceph.df = { maxAvail: 7 * GiB, bytesUsed: 0 };
    assert.match((await run(rig, { op: 'volume.clone', pool: 'p1', volume: 'd0', newName: 'c0', force: false })).message, /safe free space/);
    const n = rig.commands().length;
    assert.deepEqual(await run(rig, { op: 'volume.clone', pool: 'p1', volume: 'd0', newName: 'c0', force: true }), { ok: true, message: 'Cloned RBD volume "p1/d0" to "c0" in pool "p1"' });
    assert.deepEqual(rig.commands().slice(n), ['ceph df', 'rbd info p1/d0', 'rbd copy p1/d0 p1/c0', 'rbd info p1/c0']);
    assert.equal(JSON.parse(rig.dump()['/ceph/volumes/p1/c0/stats'] ?? '').size, 6 * GiB);
  });

  it('remove: snap purge, rm, its trees; rm failing after the purge leaves the volume and drops its snapshots', async () => {
    const rig = await withPool();
    await run(rig, vadd('d0'));
    await run(rig, { op: 'snapshot.add', pool: 'p1', volume: 'd0', snapshot: 's1' });
    rig.exec.on('rbd rm', { exitCode: 16, stderr: 'rbd: error: image still has watchers\n' });
    const r = await run(rig, { op: 'volume.remove', pool: 'p1', volume: 'd0' });
    assert.equal(r.message, 'rbd: error: image still has watchers (while removing volume "p1/d0"; already done: purging the snapshots of "p1/d0")');
    assert.deepEqual(volumeKeys(rig), ['/ceph/snapshots/p1/d0', '/ceph/volumes/p1/d0', '/ceph/volumes/p1/d0/stats']);
    const rig2 = await withPool();
    await run(rig2, vadd('d0'));
    assert.deepEqual(await run(rig2, { op: 'volume.remove', pool: 'p1', volume: 'd0' }), { ok: true, message: 'Removed RBD volume "p1/d0"' });
    assert.deepEqual(volumeKeys(rig2), []);
    assert.equal(rig2.ceph.images.size, 0);
  });
});
