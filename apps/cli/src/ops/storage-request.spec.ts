import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { VirtualClock } from '@pvc/runtime';
import {
  answerStorageRequest, baseKeys, claimStorageRequest, readStorageRequest, STORAGE_REQUEST_ROOTS, type StorageRequest, type ZkClient,
} from '@pvc/zk';
import { FakeZkServer } from '@pvc/zk/testing';
import { runCli } from '../cli.js';
import { CliContext } from '../context.js';
import type { CliIo } from '../io.js';
import { fails } from '../testing/fake-cluster.js';
import { storageChange } from './storage-request.js';

const VOL: StorageRequest = { op: 'volume.add', pool: 'vms', volume: 'd0', sizeBytes: 1024, force: false };

function io(clock: VirtualClock): CliIo & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out, err, clock, env: { USER: 'tester' }, readFile: () => Promise.reject(new Error('no files')),
    stdout: { write: (s: string) => out.push(s) }, stderr: { write: (s: string) => err.push(s) },
  };
}

async function rig(): Promise<{ clock: VirtualClock; server: FakeZkServer; zk: ZkClient; ctx: CliContext; cephd: ZkClient }> {
  const clock = new VirtualClock(1_700_000_000_000);
  const server = new FakeZkServer({ clock });
  const zk = await server.connect();
  for (const k of baseKeys()) await zk.ensurePath(k);
  const ctx = new CliContext(io(clock));
  ctx.cluster = () => Promise.resolve({ zk, connection: { name: 'test', hosts: ['x'], port: 2181, source: 'flag' } as never });
  return { clock, server, zk, ctx, cephd: await server.connect() };
}

/** A stand-in for cephd: answers each new request once, after `delayMs`, with `answer(request)`. */
function fakeCephd(r: Awaited<ReturnType<typeof rig>>, answer: (req: StorageRequest) => { ok: boolean; message: string }, delayMs = 500): string[] {
  const seen: string[] = [];
  r.cephd.watchChildren(STORAGE_REQUEST_ROOTS.requests, async (ids) => {
    for (const id of ids ?? []) {
      if (seen.includes(id)) continue;
      seen.push(id);
      const read = await readStorageRequest(r.cephd, id);
      if (!read?.ok) continue;
      await claimStorageRequest(r.cephd, id, { node: 'hv1', startedMs: r.clock.now() });
      await r.clock.sleep(delayMs);
      await answerStorageRequest(r.cephd, id, { ...answer(read.record.request), node: 'hv1', finishedMs: r.clock.now() });
    }
  });
  return seen;
}

describe('pvc storage changes: the request pipe from the CLI side', () => {
  it('writes the request, waits on a watch for the answer, deletes the request', async () => {
    const r = await rig();
    const seen = fakeCephd(r, () => ({ ok: true, message: 'Created RBD volume "vms/d0" of size 1024B' }));
    const p = storageChange(r.ctx, VOL, 30);
    await r.clock.advance(1_000);
    const done = await p;
    assert.deepEqual(done.answer?.message, 'Created RBD volume "vms/d0" of size 1024B');
    assert.equal(done.id, seen[0]);
    assert.deepEqual(await r.zk.children(STORAGE_REQUEST_ROOTS.requests), [], 'the requester deletes its request');
  });

  it('a failed answer is exit 1 with cephd\'s (Ceph\'s) message', async () => {
    const r = await rig();
    fakeCephd(r, () => ({ ok: false, message: 'rbd: create error: (36) File name too long (while creating volume "vms/d0")' }));
    const check = fails(storageChange(r.ctx, VOL, 30), 1, /^volume add vms\/d0 failed: rbd: create error: \(36\) File name too long/);
    await r.clock.advance(1_000);
    await check;
  });

  it('no cephd: after --wait-timeout, exit 4 naming the request, which is withdrawn', async () => {
    const r = await rig();
    const p = storageChange(r.ctx, VOL, 30);
    const check = fails(p, 4, /^storage request req-0000000000 \(volume add vms\/d0\): no answer after 30 s; no cephd took it \(primary_node: none\), so it was withdrawn: nothing was done$/);
    await r.clock.advance(30_000);
    await check;
    assert.deepEqual(await r.zk.children(STORAGE_REQUEST_ROOTS.requests), []);
  });

  it('a claimed request that is slower than the bound: exit 4, left to cephd, whose answer is still written', async () => {
    const r = await rig();
    fakeCephd(r, () => ({ ok: true, message: 'done' }), 60_000);
    const check = fails(storageChange(r.ctx, VOL, 10), 4, /no answer after 10 s; cephd is carrying it out and answers at \/cmd\/ceph\/req-0000000000\/answer/);
    await r.clock.advance(10_000);
    await check;
    await r.clock.advance(60_000);
    assert.ok(await r.zk.exists('/cmd/ceph/req-0000000000/answer'));
  });

  it('--no-wait returns the name after writing; the request stays for cephd', async () => {
    const r = await rig();
    const done = await storageChange(r.ctx, VOL, undefined);
    assert.deepEqual(done, { id: 'req-0000000000' });
    const read = await readStorageRequest(r.zk, done.id);
    assert.ok(read?.ok);
    assert.deepEqual(read.record, { request: VOL, client: `tester@${(await import('node:os')).hostname().split('.')[0]}` });
  });
});

describe('pvc storage: arguments are checked before any cluster is reached (exit 2)', () => {
  const cases: [string[], RegExp][] = [
    [['storage', 'pool', 'remove', 'vms'], /^pvc: pool remove deletes pool "vms" with all its volumes and snapshots: add --yes to confirm\n$/],
    [['storage', 'volume', 'remove', 'vms', 'd0'], /add --yes to confirm/],
    [['storage', 'volume', 'snapshot', 'remove', 'vms', 'd0', 's1'], /add --yes to confirm/],
    [['storage', 'volume', 'snapshot', 'rollback', 'vms', 'd0', 's1'], /snapshot rollback overwrites volume "vms\/d0" with snapshot "s1": add --yes/],
    [['storage', 'volume', 'add', 'vms', 'd0', '10Q'], /^pvc: invalid size "10Q": expected e\.g\. 10G/],
    [['storage', 'volume', 'add', 'vms', 'a/b', '10G'], /^pvc: volume name "a\/b" contains "\/"\n$/],
    [['storage', 'pool', 'add', 'vms', 'many'], /^pvc: <pgs>: expected a positive whole number, got "many"\n$/],
    [['storage', 'pool', 'add', 'vms', '64', '--replcfg', 'copies=2,mincopies=3'], /^pvc: invalid --replcfg "copies=2,mincopies=3"/],
    [['storage', 'pool', 'add', 'vms', '64', '--tier', 'fast'], /argument 'fast' is invalid\. Allowed choices are default, hdd, ssd, nvme/],
    [['storage', 'pool', 'set-pgs', 'vms', '24'], /^pvc: <pgs>: the PG count must be a power of 2, not 24\n$/],
  ];
  for (const [argv, re] of cases) {
    it(argv.join(' '), async () => {
      const x = io(new VirtualClock(0));
      const code = await runCli(argv, { ...x, env: {} });
      assert.equal(code, 2, x.err.join(''));
      assert.match(x.err.join(''), re);
    });
  }

  it('with the arguments right it goes on to the cluster (none configured here: exit 3)', async () => {
    const x = io(new VirtualClock(0));
    assert.equal(await runCli(['storage', 'pool', 'remove', 'vms', '--yes'], { ...x, env: {} }), 3);
  });
});
