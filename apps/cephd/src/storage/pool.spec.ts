import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StorageRequest } from '@pvc/zk';
import { carryOutRecord } from './carry-out.js';
import { storageRig, type StorageRig } from './rig.js';

const run = (rig: StorageRig, request: StorageRequest) => carryOutRecord(rig.io, { request, client: 'spec' });
const add = (pool: string, over: Partial<Extract<StorageRequest, { op: 'pool.add' }>> = {}): StorageRequest =>
  ({ op: 'pool.add', pool, pgs: 8, tier: 'default', copies: 2, minCopies: 1, ...over });

describe('pool add', () => {
  it("runs the original's commands and writes the pool object with its volume and snapshot parents in one go", async () => {
    const rig = await storageRig();
    assert.deepEqual(await run(rig, add('p1')), { ok: true, message: 'Created RBD pool "p1" with 8 PGs' });
    assert.deepEqual(rig.commands(), [
      'ceph osd pool ls',
      'ceph osd pool create p1 8 8 replicated_rule',
      'ceph osd pool set p1 size 2',
      'ceph osd pool set p1 min_size 1',
      'ceph osd pool application enable p1 rbd',
    ]);
    assert.deepEqual(rig.dump(), {
      '/ceph': '', '/ceph/health': '', '/ceph/util': '', '/ceph/osds': '', '/ceph/pools': '', '/ceph/volumes': '', '/ceph/snapshots': '',
      '/ceph/pools/p1': '', '/ceph/pools/p1/pgs': '8', '/ceph/pools/p1/tier': 'default', '/ceph/pools/p1/stats': '{}',
      '/ceph/volumes/p1': '', '/ceph/snapshots/p1': '',
    });
  });

  it('a tier gets its CRUSH rule <tier>_tier (created when missing, reused when there)', async () => {
    const rig = await storageRig();
    assert.equal((await run(rig, add('p1', { tier: 'hdd' }))).ok, true);
    assert.ok(rig.commands().includes('ceph osd crush rule create-replicated hdd_tier default host hdd'));
    assert.ok(rig.commands().includes('ceph osd pool create p1 8 8 hdd_tier'));
    assert.equal(rig.dump()['/ceph/pools/p1/tier'], 'hdd');
    const before = rig.commands().length;
    assert.equal((await run(rig, add('p2', { tier: 'hdd' }))).ok, true);
    assert.deepEqual(rig.commands().slice(before, before + 3), ['ceph osd pool ls', 'ceph osd crush rule ls', 'ceph osd pool create p2 8 8 hdd_tier']);
  });

  it('a step Ceph refuses after the create: Ceph\'s message, the pool removed, nothing in Zookeeper', async () => {
    const rig = await storageRig();
    const before = rig.dump();
    const r = await run(rig, add('p1', { copies: 1, minCopies: 1 }));
    assert.deepEqual(r, { ok: false, message: 'Error EPERM: configuring pool size as 1 is disabled by default. (while setting size 1 of pool "p1"; undone: pool "p1" removed)' });
    assert.ok(rig.commands().includes('ceph osd pool rm p1 p1 --yes-i-really-really-mean-it'));
    assert.equal(rig.ceph.pools.has('p1'), false);
    assert.deepEqual(rig.dump(), before);
  });

  it('a tier whose device class Ceph lacks: its message, no rule and no pool left', async () => {
    const rig = await storageRig();
    const r = await run(rig, add('p1', { tier: 'ssd' }));
    assert.deepEqual(r, { ok: false, message: 'Error EINVAL: device class ssd does not exist (while creating CRUSH rule ssd_tier)' });
    assert.deepEqual([...rig.ceph.pools.keys(), ...rig.ceph.rules], ['replicated_rule']);
  });

  it('a failure after a rule this request made: the pool and the rule are removed (reverse order)', async () => {
    const rig = await storageRig();
    rig.exec.on('ceph osd pool application enable', { exitCode: 1, stderr: 'Error EIO: injected\n' });
    const r = await run(rig, add('p1', { tier: 'hdd' }));
    assert.equal(r.message, 'Error EIO: injected (while enabling rbd on pool "p1"; undone: pool "p1" removed; undone: CRUSH rule hdd_tier removed)');
    assert.deepEqual([...rig.ceph.rules], ['replicated_rule']);
  });

  it('the Zookeeper write fails after Ceph made the pool: the pool is removed', async () => {
    const rig = await storageRig();
    rig.server.failNextWrite({ code: 'CONNECTION_LOSS' });
    const r = await run(rig, add('p1'));
    assert.equal(r.ok, false);
    assert.match(r.message, /^Zookeeper: .*CONNECTION_LOSS.* \(while writing to Zookeeper; undone: pool "p1" removed\)$/);
    assert.equal(rig.ceph.pools.has('p1'), false);
    assert.equal(rig.dump()['/ceph/pools/p1'], undefined);
  });

  it('refused before anything runs: a pool in Zookeeper, or one in Ceph that PVC does not manage (never removed by an undo)', async () => {
    const rig = await storageRig();
    await run(rig, add('p1'));
    const n = rig.commands().length;
    assert.deepEqual(await run(rig, add('p1')), { ok: false, message: 'pool "p1" already exists' });
    rig.ceph.addPool('theirs');
    assert.deepEqual(await run(rig, add('theirs')), { ok: false, message: 'Ceph already has a pool "theirs" that PVC does not manage; pick another name' });
    assert.deepEqual(rig.commands().slice(n), ['ceph osd pool ls', 'ceph osd pool ls'], 'only the looks at the pool list');
    assert.equal(rig.ceph.pools.has('theirs'), true);
  });

  it('a stale volume or snapshot parent of the name is replaced', async () => {
    const rig = await storageRig();
    await rig.zk.ensurePath('/ceph/volumes/p1/old');
    assert.equal((await run(rig, add('p1'))).ok, true);
    assert.equal(rig.dump()['/ceph/volumes/p1/old'], undefined);
  });
});

describe('pool remove', () => {
  it('removes the volumes first (snap purge, rm), then the pool, then every Zookeeper tree of it', async () => {
    const rig = await storageRig();
    await run(rig, add('p1'));
    await run(rig, { op: 'volume.add', pool: 'p1', volume: 'd0', sizeBytes: 1024, force: false });
    await run(rig, { op: 'snapshot.add', pool: 'p1', volume: 'd0', snapshot: 's' });
    const n = rig.commands().length;
    assert.deepEqual(await run(rig, { op: 'pool.remove', pool: 'p1' }), { ok: true, message: 'Removed RBD pool "p1" and all its volumes' });
    assert.deepEqual(rig.commands().slice(n), ['rbd snap purge p1/d0', 'rbd rm p1/d0', 'ceph osd pool rm p1 p1 --yes-i-really-really-mean-it']);
    assert.deepEqual(Object.keys(rig.dump()).filter((k) => k.includes('p1')), []);
  });

  it('a failure part-way: Zookeeper keeps only what is still there; an image already gone counts as removed', async () => {
    const rig = await storageRig();
    await run(rig, add('p1'));
    await run(rig, { op: 'volume.add', pool: 'p1', volume: 'd0', sizeBytes: 1024, force: false });
    await run(rig, { op: 'volume.add', pool: 'p1', volume: 'd1', sizeBytes: 1024, force: false });
    rig.ceph.images.delete('p1/d0');
    rig.exec.on('ceph osd pool rm', { exitCode: 1, stderr: 'Error EPERM: pool deletion is disabled; you must first set the mon_allow_pool_delete config option to true before you can destroy a pool\n' });
    const r = await run(rig, { op: 'pool.remove', pool: 'p1' });
    assert.equal(r.ok, false);
    assert.match(r.message, /^Error EPERM: pool deletion is disabled; .* \(while removing pool "p1"; already done: purging the snapshots of "p1\/d0", removing volume "p1\/d0", purging the snapshots of "p1\/d1", removing volume "p1\/d1"\)$/);
    assert.deepEqual(Object.keys(rig.dump()).filter((k) => k.includes('p1')).sort(), ['/ceph/pools/p1', '/ceph/pools/p1/pgs', '/ceph/pools/p1/stats', '/ceph/pools/p1/tier', '/ceph/snapshots/p1', '/ceph/volumes/p1']);
  });

  it('an unknown pool is refused', async () => {
    const rig = await storageRig();
    assert.deepEqual(await run(rig, { op: 'pool.remove', pool: 'nope' }), { ok: false, message: 'no pool "nope" in the cluster' });
    assert.deepEqual(rig.commands(), []);
  });
});

describe('pool set-pgs', () => {
  it('sets pg_num and pgp_num, then pgs', async () => {
    const rig = await storageRig();
    await run(rig, add('p1'));
    const n = rig.commands().length;
    assert.deepEqual(await run(rig, { op: 'pool.set-pgs', pool: 'p1', pgs: 32 }), { ok: true, message: 'Set the PG count of RBD pool "p1" to 32' });
    assert.deepEqual(rig.commands().slice(n), ['ceph osd pool set p1 pg_num 32', 'ceph osd pool set p1 pgp_num 32']);
    assert.equal(rig.dump()['/ceph/pools/p1/pgs'], '32');
  });

  it('not a power of 2: refused; pgp_num refused by Ceph: pg_num set back', async () => {
    const rig = await storageRig();
    await run(rig, add('p1'));
    assert.deepEqual(await run(rig, { op: 'pool.set-pgs', pool: 'p1', pgs: 24 }), { ok: false, message: 'the PG count must be a power of 2, not 24' });
    rig.exec.on('ceph osd pool set p1 pgp_num', { exitCode: 34, stderr: "Error ERANGE: pool id 5 pgp_num 32 > pg_num 8\n" });
    const r = await run(rig, { op: 'pool.set-pgs', pool: 'p1', pgs: 32 });
    assert.equal(r.message, 'Error ERANGE: pool id 5 pgp_num 32 > pg_num 8 (while setting pgp_num 32 of pool "p1"; undone: pg_num set back to 8)');
    assert.equal(rig.ceph.pools.get('p1')?.pgNum, 8);
    assert.equal(rig.dump()['/ceph/pools/p1/pgs'], '8');
  });
});
