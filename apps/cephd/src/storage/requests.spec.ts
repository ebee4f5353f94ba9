import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  claimStorageRequest, readStorageRequestState, submitStorageRequest, type StorageAnswer, type StorageRequest, type ZkClient,
} from '@pvc/zk';
import { storageRig, type StorageRig } from './rig.js';
import { StorageRequests, type RequestTiming } from './requests.js';

const TIMING: RequestTiming = { sweepMs: 1_000, answeredTtlMs: 60_000, unclaimedTtlMs: 30_000, stopWaitMs: 2_000 };
const POOL: StorageRequest = { op: 'pool.add', pool: 'p1', pgs: 8, tier: 'default', copies: 2, minCopies: 1 };
const VOL: StorageRequest = { op: 'volume.add', pool: 'p1', volume: 'd0', sizeBytes: 4096, force: false };

function runner(rig: StorageRig, node = 'hv1', zk: ZkClient = rig.zk): StorageRequests {
  return new StorageRequests({ io: { ...rig.io, zk }, node, clock: rig.clock, logger: rig.logger, timing: TIMING });
}

async function answerOf(rig: StorageRig, id: string): Promise<StorageAnswer | 'unreadable' | undefined> {
  return (await readStorageRequestState(rig.zk, id))?.answer?.value;
}

const submit = (rig: StorageRig, request: StorageRequest): Promise<string> => submitStorageRequest(rig.zk, { request, client: 'spec' });

describe('storage requests (the primary duty)', () => {
  it('a request written while no cephd is primary is carried out at takeover, answered, and collected after its bound', async () => {
    const rig = await storageRig();
    const id = await submit(rig, POOL);
    await rig.clock.advance(5_000);
    assert.equal(await answerOf(rig, id), undefined, 'nobody takes it without a primary');
    const r = runner(rig);
    await r.duty().start();
    await rig.clock.advance(10);
    assert.deepEqual(await answerOf(rig, id), { ok: true, message: 'Created RBD pool "p1" with 8 PGs', node: 'hv1', finishedMs: rig.clock.now() - 10 });
    assert.equal((await readStorageRequestState(rig.zk, id))?.live, false);
    await rig.clock.advance(TIMING.answeredTtlMs + TIMING.sweepMs);
    assert.equal(await rig.zk.exists(`/cmd/ceph/${id}`), undefined, 'an answer nobody collected is deleted');
    await r.stop();
  });

  it('requests run one at a time, in the order they were made', async () => {
    const rig = await storageRig();
    let inFlight = 0;
    let most = 0;
    rig.exec.on('ceph osd pool create', async (c) => {
      most = Math.max(most, ++inFlight);
      await rig.clock.sleep(3_000);
      inFlight--;
      return rig.ceph.answer('ceph', c.args);
    });
    const r = runner(rig);
    await r.start();
    const ids = [await submit(rig, POOL), await submit(rig, VOL), await submit(rig, { ...POOL, pool: 'p2' })];
    await rig.clock.advance(10_000);
    for (const id of ids) assert.equal((await answerOf(rig, id) as StorageAnswer).ok, true, id);
    assert.equal(most, 1);
    const order = rig.commands().filter((c) => /pool create|rbd create/.test(c));
    assert.deepEqual(order, ['ceph osd pool create p1 8 8 replicated_rule', 'rbd create --size 4096B p1/d0', 'ceph osd pool create p2 8 8 replicated_rule']);
    await r.stop();
  });

  it('bad request data is answered as an error naming the request; the next request still runs', async () => {
    const rig = await storageRig();
    await rig.zk.ensurePath('/cmd/ceph');
    await rig.zk.create('/cmd/ceph/req-0000000000', '{"version":1,"op":"pool.add","pool":"p1","pgs":-3}');
    const good = await submit(rig, POOL);
    const r = runner(rig);
    await r.start();
    await rig.clock.advance(10);
    const bad = await answerOf(rig, 'req-0000000000') as StorageAnswer;
    assert.equal(bad.ok, false);
    assert.match(bad.message, /^request req-0000000000 cannot be carried out: bad value at \/cmd\/ceph\/req-0000000000: .*\("pgs" is not a positive integer\)$/);
    assert.equal((await answerOf(rig, good) as StorageAnswer).ok, true);
    await r.stop();
  });

  it('claimed by an executor that died (no live marker): answered "interrupted", never run again', async () => {
    const rig = await storageRig();
    const id = await submit(rig, POOL);
    await rig.zk.create(`/cmd/ceph/${id}/claim`, '{"node":"hv2","started_ms":1}');
    const r = runner(rig);
    await r.start();
    await rig.clock.advance(10);
    const a = await answerOf(rig, id) as StorageAnswer;
    assert.equal(a.ok, false);
    assert.match(a.message, /^interrupted: cephd on hv2 started it and stopped before answering .* it is not run again/);
    assert.deepEqual(rig.commands(), []);
    await r.stop();
  });

  it('claimed by a live executor elsewhere: left to it; once its session ends, answered "interrupted"', async () => {
    const rig = await storageRig();
    const other = await rig.server.connect();
    const id = await submit(rig, POOL);
    assert.equal(await claimStorageRequest(other, id, { node: 'hv2', startedMs: 1 }), true);
    const r = runner(rig);
    await r.start();
    await rig.clock.advance(3_000);
    assert.equal(await answerOf(rig, id), undefined);
    await rig.server.expireSession(other);
    await rig.clock.advance(TIMING.sweepMs);
    assert.match((await answerOf(rig, id) as StorageAnswer).message, /^interrupted: cephd on hv2/);
    assert.deepEqual(rig.commands(), []);
    await r.stop();
  });

  it('a request nobody took within its bound is answered "expired" and not run', async () => {
    const rig = await storageRig();
    const id = await submit(rig, POOL);
    await rig.clock.advance(TIMING.unclaimedTtlMs);
    const r = runner(rig);
    await r.start();
    await rig.clock.advance(10);
    assert.deepEqual(await answerOf(rig, id), { ok: false, message: 'expired: no cephd on a primary took it within 30 s; nothing was done', node: 'hv1', finishedMs: rig.clock.now() - 10 });
    assert.deepEqual(rig.commands(), []);
    await r.stop();
  });

  it('an answer that could not be written is written by a later pass (the request is not run again)', async () => {
    const rig = await storageRig();
    await submit(rig, POOL);
    const r = runner(rig);
    await r.start();
    await rig.clock.advance(10);
    rig.exec.on('rbd snap rollback', (c) => (rig.server.failNextWrite({ code: 'CONNECTION_LOSS' }), rig.ceph.answer('rbd', c.args)));
    await submit(rig, VOL);
    await submit(rig, { op: 'snapshot.add', pool: 'p1', volume: 'd0', snapshot: 's' });
    const id = await submit(rig, { op: 'snapshot.rollback', pool: 'p1', volume: 'd0', snapshot: 's' });
    await rig.clock.advance(10);
    assert.equal(await answerOf(rig, id), undefined);
    assert.ok(rig.logs.some((l) => l.msg === `storage request ${id}: answer not written yet; retried at the next pass`));
    await rig.clock.advance(TIMING.sweepMs);
    assert.equal((await answerOf(rig, id) as StorageAnswer).ok, true);
    assert.equal(rig.commands().filter((c) => c.startsWith('rbd snap rollback')).length, 1);
    await r.stop();
  });

  it('stop takes no new request and waits (bounded) for the one in progress, which still answers', async () => {
    const rig = await storageRig();
    rig.exec.on('ceph osd pool create', async (c) => (await rig.clock.sleep(10_000), rig.ceph.answer('ceph', c.args)));
    const r = runner(rig);
    await r.start();
    const slow = await submit(rig, POOL);
    await rig.clock.advance(100);
    const stopped = r.stop();
    const next = await submit(rig, { ...POOL, pool: 'p2' });
    await rig.clock.advance(TIMING.stopWaitMs);
    await stopped;
    assert.ok(rig.logs.some((l) => l.msg === 'storage requests: a request is still in progress; it finishes and answers on its own'));
    await rig.clock.advance(10_000);
    assert.equal((await answerOf(rig, slow) as StorageAnswer).ok, true);
    assert.equal(await readStorageRequestState(rig.zk, next).then((s) => s?.claim), undefined, 'not taken after stop');
  });

  it('two cephds that both think they are primary (a handover overlap) run each request once', async () => {
    const rig = await storageRig();
    const zk2 = await rig.server.connect();
    const [a, b] = [runner(rig, 'hv1'), runner(rig, 'hv2', zk2)];
    await Promise.all([a.start(), b.start()]);
    const ids = [];
    for (let i = 0; i < 6; i++) ids.push(await submit(rig, { ...POOL, pool: `p${i}` }));
    await rig.clock.advance(1_000);
    for (const id of ids) assert.equal((await answerOf(rig, id) as StorageAnswer).ok, true, id);
    assert.equal(rig.commands().filter((c) => c.startsWith('ceph osd pool create')).length, 6);
    await Promise.all([a.stop(), b.stop()]);
  });
});
