import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { VirtualClock } from '@pvc/runtime';
import { FakeZkServer } from './testing/index.js';
import { formatBytes, parseByteSize } from './storage-bytes.js';
import {
  describeStorageRequest, sortStorageRequests, STORAGE_OPS, storageNameProblem, StorageRequestError, storageRequestJson, storageRequestPaths,
  type StorageRequest,
} from './storage-requests.js';
import {
  answerStorageRequest, claimStorageRequest, readStorageRequest, readStorageRequestState, submitStorageRequest, withdrawStorageRequest,
} from './storage-request-io.js';

const KEY = '/cmd/ceph/req-0000000007';
const SAMPLES: StorageRequest[] = [
  { op: 'pool.add', pool: 'vms', pgs: 64, tier: 'ssd', copies: 3, minCopies: 2 },
  { op: 'pool.remove', pool: 'vms' },
  { op: 'pool.set-pgs', pool: 'vms', pgs: 128 },
  { op: 'volume.add', pool: 'vms', volume: 'disk0', sizeBytes: 10 * 1024 ** 3, force: false },
  { op: 'volume.remove', pool: 'vms', volume: 'disk0' },
  { op: 'volume.resize', pool: 'vms', volume: 'disk0', sizeBytes: 1024, force: true },
  { op: 'volume.rename', pool: 'vms', volume: 'disk0', newName: 'disk1' },
  { op: 'volume.clone', pool: 'vms', volume: 'disk0', newName: 'disk2', force: false },
  { op: 'snapshot.add', pool: 'vms', volume: 'disk0', snapshot: 's1' },
  { op: 'snapshot.remove', pool: 'vms', volume: 'disk0', snapshot: 's1' },
  { op: 'snapshot.rollback', pool: 'vms', volume: 'disk0', snapshot: 's1' },
];

function problemOf(raw: string): string {
  try {
    storageRequestJson.decode(raw, KEY);
  } catch (err) {
    assert.ok(err instanceof StorageRequestError || (err as { code?: string }).code === 'ZK_BAD_DATA', String(err));
    return (err as Error).message;
  }
  return assert.fail(`decoded: ${raw}`);
}

describe('storage request codec', () => {
  it('round-trips every operation with snake_case JSON fields, a version and the client', () => {
    assert.equal(SAMPLES.length, STORAGE_OPS.length);
    for (const request of SAMPLES) {
      const raw = storageRequestJson.encode({ request, client: 'root@hv1' });
      assert.deepEqual(storageRequestJson.decode(raw, KEY), { request, client: 'root@hv1' });
    }
    assert.equal(
      storageRequestJson.encode({ request: SAMPLES[0] as StorageRequest, client: 'c' }),
      '{"version":1,"op":"pool.add","pool":"vms","pgs":64,"tier":"ssd","copies":3,"min_copies":2,"client":"c"}',
    );
  });

  it('bad data is an error naming the request key and the first thing wrong', () => {
    const cases: [string, RegExp][] = [
      ['not json', /bad value at \/cmd\/ceph\/req-0000000007: "not json" is not a storage request \(JSON object\)/],
      ['[1]', /not a storage request \(JSON object\)/],
      ['{"op":"pool.remove","pool":"x"}', /"version" is undefined, not 1/],
      ['{"version":1,"op":"pool.drop","pool":"x"}', /unknown "op" "pool.drop"/],
      ['{"version":1,"op":"pool.remove"}', /"pool" is not a string/],
      ['{"version":1,"op":"pool.remove","pool":"-x"}', /pool name "-x" starts with "-"/],
      ['{"version":1,"op":"volume.remove","pool":"p","volume":"a/b"}', /volume name "a\/b" contains "\/"/],
      ['{"version":1,"op":"pool.set-pgs","pool":"p","pgs":"64"}', /"pgs" is not a positive integer/],
      ['{"version":1,"op":"pool.set-pgs","pool":"p","pgs":0}', /"pgs" is not a positive integer/],
      ['{"version":1,"op":"volume.add","pool":"p","volume":"v","size_bytes":1.5,"force":false}', /"size_bytes" is not a positive integer/],
      ['{"version":1,"op":"volume.add","pool":"p","volume":"v","size_bytes":1,"force":"yes"}', /"force" is not true or false/],
      ['{"version":1,"op":"pool.add","pool":"p","pgs":8,"tier":"fast","copies":3,"min_copies":2}', /"tier" is not one of default\/hdd\/ssd\/nvme/],
      ['{"version":1,"op":"pool.add","pool":"p","pgs":8,"tier":"hdd","copies":2,"min_copies":3}', /"min_copies" is greater than "copies"/],
    ];
    for (const [raw, re] of cases) assert.match(problemOf(raw), re, raw);
  });

  it('names: only what cannot reach Ceph as the name is refused', () => {
    assert.equal(storageNameProblem('pool', 'vms'), undefined);
    assert.equal(storageNameProblem('pool', '.dot pool@x'), undefined, 'Ceph decides about the rest');
    for (const bad of ['', '.', '..', 'a/b', '-x', 'a\0b']) assert.ok(storageNameProblem('pool', bad), bad);
  });

  it('describes requests and sorts names by sequence', () => {
    assert.deepEqual(SAMPLES.map(describeStorageRequest).slice(0, 4), ['pool.add vms', 'pool.remove vms', 'pool.set-pgs vms', 'volume.add vms/disk0']);
    assert.equal(describeStorageRequest(SAMPLES[8] as StorageRequest), 'snapshot.add vms/disk0@s1');
    assert.deepEqual(sortStorageRequests(['req-0000000010', 'junk', 'req-0000000002']), ['req-0000000002', 'req-0000000010', 'junk']);
  });
});

describe('byte sizes (the original\'s units, 1024-based)', () => {
  it('parses sizes with or without a unit', () => {
    assert.equal(parseByteSize('10G'), 10 * 1024 ** 3);
    assert.equal(parseByteSize('10GiB'), 10 * 1024 ** 3);
    assert.equal(parseByteSize('512m'), 512 * 1024 ** 2);
    assert.equal(parseByteSize('1.5K'), 1536);
    assert.equal(parseByteSize('4096'), 4096);
    for (const bad of ['', 'G', '10X', '-1G', '0', '1e3', '10 Gigs']) assert.equal(parseByteSize(bad), undefined, bad);
  });

  it('shows sizes as the original: the smallest unit with at most four digits, rounded up', () => {
    assert.equal(formatBytes(1024 ** 3), '1024M');
    assert.equal(formatBytes(10 * 1024 ** 3), '10G');
    assert.equal(formatBytes(1000), '1000B');
    assert.equal(formatBytes(123_456_789), '118M');
  });
});

describe('the request pipe in Zookeeper', () => {
  const request: StorageRequest = { op: 'volume.remove', pool: 'vms', volume: 'd' };

  async function zk() {
    const server = new FakeZkServer({ clock: new VirtualClock(1_700_000_000_000) });
    return { server, a: await server.connect(), b: await server.connect() };
  }

  it('submit makes numbered children (parents created); claims and answers happen once', async () => {
    const { a, b } = await zk();
    const [id1, id2] = [await submitStorageRequest(a, { request, client: 'x' }), await submitStorageRequest(b, { request, client: 'y' })];
    assert.deepEqual([id1, id2], ['req-0000000000', 'req-0000000001']);
    const read = await readStorageRequest(a, id1);
    assert.ok(read?.ok);
    assert.deepEqual(read.record, { request, client: 'x' });
    assert.equal(await claimStorageRequest(a, id1, { node: 'hv1', startedMs: 5 }), true);
    assert.equal(await claimStorageRequest(b, id1, { node: 'hv2', startedMs: 6 }), false, 'a second claim loses');
    let state = await readStorageRequestState(b, id1);
    assert.deepEqual(state && { claim: state.claim, live: state.live, answer: state.answer }, { claim: { node: 'hv1', startedMs: 5 }, live: true, answer: undefined });
    const answer = { ok: true, message: 'done', node: 'hv1', finishedMs: 9 };
    assert.equal(await answerStorageRequest(a, id1, answer), 'written');
    assert.equal(await answerStorageRequest(b, id1, { ...answer, message: 'again' }), 'exists');
    state = await readStorageRequestState(b, id1);
    assert.deepEqual(state?.answer?.value, answer);
    assert.equal(state?.live, false, 'the live marker goes with the answer');
    assert.equal(await claimStorageRequest(a, 'req-0000000099', { node: 'hv1', startedMs: 1 }), false, 'a request that is gone');
  });

  it('the live marker is ephemeral: it goes when the executor\'s session ends', async () => {
    const { server, a, b } = await zk();
    const id = await submitStorageRequest(a, { request, client: 'x' });
    await claimStorageRequest(b, id, { node: 'hv2', startedMs: 1 });
    await server.expireSession(b);
    const state = await readStorageRequestState(a, id);
    assert.equal(state?.live, false);
    assert.deepEqual(state?.claim, { node: 'hv2', startedMs: 1 });
  });

  it('withdraw deletes only an unclaimed request', async () => {
    const { a } = await zk();
    const [id1, id2] = [await submitStorageRequest(a, { request, client: 'x' }), await submitStorageRequest(a, { request, client: 'x' })];
    await claimStorageRequest(a, id2, { node: 'hv1', startedMs: 1 });
    assert.equal(await withdrawStorageRequest(a, id1), 'withdrawn');
    assert.equal(await withdrawStorageRequest(a, id1), 'gone');
    assert.equal(await withdrawStorageRequest(a, id2), 'claimed');
    assert.ok(await a.exists(storageRequestPaths(id2).root));
  });

  it('bad request data reads as a problem naming the request; bad claim and answer as unreadable', async () => {
    const { a } = await zk();
    await a.ensurePath('/cmd/ceph/req-0000000005/claim');
    await a.set('/cmd/ceph/req-0000000005', '{"version":1,"op":"volume.add"}');
    await a.create('/cmd/ceph/req-0000000005/answer', 'garbage');
    const read = await readStorageRequest(a, 'req-0000000005');
    assert.ok(read && !read.ok);
    assert.match(read.problem, /bad value at \/cmd\/ceph\/req-0000000005: .* \("pool" is not a string\)/);
    const state = await readStorageRequestState(a, 'req-0000000005');
    assert.equal(state?.claim, 'unreadable');
    assert.equal(state?.answer?.value, 'unreadable');
    assert.equal(await readStorageRequest(a, 'req-0000000006'), undefined);
  });
});
