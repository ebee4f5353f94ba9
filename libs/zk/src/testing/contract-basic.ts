import assert from 'node:assert/strict';
import { it } from 'node:test';
import { isZkError, ZkTransactionError, type ZkErrorCode } from '../errors.js';
import type { ContractContext } from './contract-harness.js';

/** Rejects with a ZkError of exactly `code`. */
export async function rejectsWith(p: Promise<unknown>, code: ZkErrorCode | 'ABORTED'): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.equal((err as { code?: unknown }).code, code, `expected ${code}, got ${String(err)}`);
    return true;
  });
}

/** Basic node operations: data, versions, errors, delete, multi, sequential and ephemeral nodes. */
export function registerBasics(ctx: ContractContext): void {
  it('create, get, set and exists report data and versions', async () => {
    const c = await ctx.client();
    const path = await c.create(ctx.p('a'), 'one');
    assert.equal(path, ctx.p('a'));
    const got = await c.get(path);
    assert.equal(got.data, 'one');
    assert.equal(got.stat.version, 0);
    assert.equal(got.stat.ephemeralOwner, undefined);
    const st = await c.set(path, 'two');
    assert.equal(st.version, 1);
    assert.equal((await c.set(path, 'two')).version, 2, 'writing the same value still bumps the version');
    assert.equal(await c.read(path), 'two');
    assert.equal(await c.read(ctx.p('missing')), undefined);
    assert.equal((await c.exists(path))?.dataLength, 3);
    assert.equal(await c.exists(ctx.p('missing')), undefined);
    await c.create(ctx.p('a/b'), 'ünïcode ✓');
    assert.equal(await c.read(ctx.p('a/b')), 'ünïcode ✓');
    assert.deepEqual(await c.children(path), ['b']);
    assert.equal((await c.exists(path))?.numChildren, 1);
  });

  it('errors carry stable codes', async () => {
    const c = await ctx.client();
    await c.create(ctx.p('x'), '');
    await rejectsWith(c.get(ctx.p('nope')), 'NO_NODE');
    await rejectsWith(c.children(ctx.p('nope')), 'NO_NODE');
    await rejectsWith(c.create(ctx.p('x'), ''), 'NODE_EXISTS');
    await rejectsWith(c.create(ctx.p('nope/child'), ''), 'NO_NODE');
    await rejectsWith(c.set(ctx.p('x'), 'v', { version: 7 }), 'BAD_VERSION');
    await c.create(ctx.p('x/y'), '');
    await rejectsWith(c.delete(ctx.p('x'), { recursive: false }), 'NOT_EMPTY');
    await c.create(ctx.p('eph'), '', { ephemeral: true });
    await rejectsWith(c.create(ctx.p('eph/child'), ''), 'NO_CHILDREN_FOR_EPHEMERALS');
    await rejectsWith(c.get('no-slash'), 'BAD_ARGUMENTS');
    const err = await c.get(ctx.p('nope')).catch((e: unknown) => e);
    assert.ok(isZkError(err, 'NO_NODE'));
    assert.equal(err.path, ctx.p('nope'));
    assert.equal(err.retryable, false);
  });

  it('delete is recursive by default; missingOk tolerates an absent node', async () => {
    const c = await ctx.client();
    await c.createObject(ctx.p('tree'), [['a', '1'], ['a/b', '2'], ['a/b/c', '3'], ['d', '4']]);
    await c.delete(ctx.p('tree'));
    assert.equal(await c.exists(ctx.p('tree')), undefined);
    await rejectsWith(c.delete(ctx.p('tree')), 'NO_NODE');
    await c.delete(ctx.p('tree'), { missingOk: true });
    await c.create(ctx.p('leaf'), '');
    await c.delete(ctx.p('leaf'), { recursive: false, version: 0 });
    assert.equal(await c.exists(ctx.p('leaf')), undefined);
  });

  it('multi is atomic: a failing op applies nothing and names its index', async () => {
    const c = await ctx.client();
    await c.create(ctx.p('m'), 'orig');
    const err = await c
      .multi([
        { type: 'create', path: ctx.p('m1'), data: 'x' },
        { type: 'set', path: ctx.p('m'), data: 'changed' },
        { type: 'check', path: ctx.p('m'), version: 5 },
      ])
      .catch((e: unknown) => e);
    assert.ok(err instanceof ZkTransactionError, String(err));
    assert.equal(err.code, 'BAD_VERSION');
    assert.equal(err.failedIndex, 2);
    assert.equal(await c.exists(ctx.p('m1')), undefined);
    assert.equal(await c.read(ctx.p('m')), 'orig');
    const res = await c.multi([
      { type: 'create', path: ctx.p('m1'), data: 'x' },
      { type: 'set', path: ctx.p('m'), data: 'changed', version: 0 },
      { type: 'check', path: ctx.p('m'), version: 1 },
      { type: 'delete', path: ctx.p('m1') },
    ]);
    assert.deepEqual(res.map((r) => r.type), ['create', 'set', 'check', 'delete']);
    assert.equal(await c.read(ctx.p('m')), 'changed');
  });

  it('version 0 is enforced inside transactions (not treated as "any")', async () => {
    const c = await ctx.client();
    await c.create(ctx.p('v'), '');
    await c.set(ctx.p('v'), 'bumped');
    await rejectsWith(c.multi([{ type: 'check', path: ctx.p('v'), version: 0 }]), 'BAD_VERSION');
    await rejectsWith(c.multi([{ type: 'set', path: ctx.p('v'), data: 'x', version: 0 }]), 'BAD_VERSION');
    await rejectsWith(c.multi([{ type: 'delete', path: ctx.p('v'), version: 0 }]), 'BAD_VERSION');
    assert.equal(await c.read(ctx.p('v')), 'bumped');
  });

  it('sequential nodes get a 10-digit suffix counting the parent\'s child creations', async () => {
    const c = await ctx.client();
    await c.create(ctx.p('seq'), '');
    const a = await c.create(ctx.p('seq/n-'), '', { sequential: true });
    const b = await c.create(ctx.p('seq/n-'), '', { sequential: true, ephemeral: true });
    assert.equal(a, ctx.p('seq/n-0000000000'));
    assert.equal(b, ctx.p('seq/n-0000000001'));
    assert.equal((await c.exists(ctx.p('seq')))?.cversion, 2);
    await c.delete(a);
    assert.equal((await c.exists(ctx.p('seq')))?.cversion, 3, 'a delete bumps the cversion…');
    const d = await c.create(ctx.p('seq/n-'), '', { sequential: true });
    assert.equal(d, ctx.p('seq/n-0000000002'), '…but not the sequence counter (ZooKeeper 3.8)');
  });

  it('ephemeral nodes belong to their session and vanish when it closes', async () => {
    const owner = await ctx.client();
    const other = await ctx.client();
    await owner.create(ctx.p('e'), 'mine', { ephemeral: true });
    const st = await other.exists(ctx.p('e'));
    assert.equal(st?.ephemeralOwner, owner.sessionId);
    await owner.close();
    await ctx.eventually('the ephemeral node is gone', async () => (await other.exists(ctx.p('e'))) === undefined);
  });

  it('ensurePath creates missing ancestors with empty data', async () => {
    const c = await ctx.client();
    await c.ensurePath(ctx.p('q/r/s'));
    assert.equal(await c.read(ctx.p('q/r/s')), '');
    assert.equal(await c.read(ctx.p('q')), '');
    await c.ensurePath(ctx.p('q/r/s'));
  });

  it('an aborted signal rejects a call with ABORTED', async () => {
    const c = await ctx.client();
    await rejectsWith(c.get(ctx.root, { signal: AbortSignal.abort() }), 'ABORTED');
    const ac = new AbortController();
    const pending = c.get(ctx.root, { signal: ac.signal });
    ac.abort();
    await rejectsWith(pending, 'ABORTED');
    assert.equal(await c.read(ctx.root), '', 'the client still works afterwards');
  });
}
