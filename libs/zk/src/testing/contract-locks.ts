import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { it } from 'node:test';
import { Lock, ReadLock, WriteLock, type LostReason } from '../lock.js';
import type { ZkClient } from '../types.js';
import type { ContractContext } from './contract-harness.js';

const LOCK_NAME = /^[0-9a-f]{32}__lock__\d{10}$/;
const RLOCK_NAME = /^[0-9a-f]{32}__rlock__\d{10}$/;

/** Kazoo-compatible locks, built on the ZkClient interface only. */
export function registerLocks(ctx: ContractContext): void {
  /** True when `p` settles within `ms` (it keeps running otherwise). */
  const settles = async (p: Promise<unknown>, ms = 300): Promise<boolean> => {
    const ac = new AbortController();
    const r = await Promise.race([p.then(() => true), ctx.clock.sleep(ms, ac.signal).then(() => false)]);
    ac.abort();
    return r;
  };
  const opts = (identifier?: string) => ({ clock: ctx.clock, ...(identifier ? { identifier } : {}) });
  /** Simulates a Python daemon: a contender created by hand with kazoo's naming. */
  const pythonContender = (c: ZkClient, path: string, kind: '__lock__' | '__rlock__') =>
    c.create(`${path}/${randomUUID().replace(/-/g, '')}${kind}`, 'python-daemon', { ephemeral: true, sequential: true });

  it('contenders use kazoo names and data; acquire creates a missing parent; release deletes', async () => {
    const c = await ctx.client();
    const lock = new Lock(c, ctx.p('dom/state'), opts('node1-id'));
    assert.equal(await lock.acquire(), true);
    assert.equal(lock.held, true);
    const [name, ...rest] = await c.children(ctx.p('dom/state'));
    assert.equal(rest.length, 0);
    assert.match(name ?? '', LOCK_NAME);
    assert.equal(lock.node, name);
    const node = await c.get(ctx.p(`dom/state/${name ?? ''}`));
    assert.equal(node.data, 'node1-id');
    assert.equal(node.stat.ephemeralOwner, c.sessionId);
    const reader = new ReadLock(c, ctx.p('other'), opts());
    assert.equal(await reader.acquire(), true);
    assert.match((await c.children(ctx.p('other')))[0] ?? '', RLOCK_NAME);
    assert.equal(await lock.release(), true);
    assert.equal(await lock.release(), false);
    assert.deepEqual(await c.children(ctx.p('dom/state')), []);
    assert.equal(lock.held, false);
  });

  it('Lock is exclusive; a timed-out acquire returns false and removes its node', async () => {
    const [c1, c2] = [await ctx.client(), await ctx.client()];
    const a = new Lock(c1, ctx.p('ex'), opts('a'));
    const b = new Lock(c2, ctx.p('ex'), opts('b'));
    assert.equal(await a.acquire(), true);
    assert.equal(await b.acquire({ timeoutMs: 300 }), false);
    assert.equal(await b.acquire({ blocking: false }), false);
    assert.equal((await c1.children(ctx.p('ex'))).length, 1, 'the losers removed their contenders');
    const waiting = b.acquire();
    assert.equal(await settles(waiting), false, 'b waits while a holds');
    assert.deepEqual(await a.contenders(), ['a', 'b']);
    await a.release();
    assert.equal(await waiting, true);
    assert.equal(b.held, true);
  });

  it('ReadLocks share; a WriteLock waits for every earlier reader', async () => {
    const [c1, c2, c3] = [await ctx.client(), await ctx.client(), await ctx.client()];
    const r1 = new ReadLock(c1, ctx.p('rw'), opts());
    const r2 = new ReadLock(c2, ctx.p('rw'), opts());
    assert.equal(await r1.acquire(), true);
    assert.equal(await r2.acquire({ timeoutMs: 2000 }), true, 'readers share');
    const w = new WriteLock(c3, ctx.p('rw'), opts());
    const writing = w.acquire();
    assert.equal(await settles(writing), false);
    await r1.release();
    assert.equal(await settles(writing), false, 'still one earlier reader');
    await r2.release();
    assert.equal(await writing, true);
  });

  it('a ReadLock is blocked by an earlier WriteLock contender, even a waiting one', async () => {
    const [c1, c2, c3] = [await ctx.client(), await ctx.client(), await ctx.client()];
    const r1 = new ReadLock(c1, ctx.p('q'), opts());
    const w = new WriteLock(c2, ctx.p('q'), opts());
    const r2 = new ReadLock(c3, ctx.p('q'), opts());
    assert.equal(await r1.acquire(), true);
    const writing = w.acquire();
    await ctx.eventually('the writer queued', async () => (await c1.children(ctx.p('q'))).length === 2);
    const reading = r2.acquire();
    assert.equal(await settles(reading), false, 'the later reader queues behind the writer');
    await r1.release();
    assert.equal(await writing, true);
    assert.equal(await settles(reading), false, 'the writer holds');
    await w.release();
    assert.equal(await reading, true);
  });

  it('a contender created by hand with kazoo naming (a Python daemon) is respected', async () => {
    const [py, ts] = [await ctx.client(), await ctx.client()];
    await py.ensurePath(ctx.p('fence_lock'));
    const pyNode = await pythonContender(py, ctx.p('fence_lock'), '__lock__');
    const lock = new Lock(ts, ctx.p('fence_lock'), opts());
    assert.equal(await lock.acquire({ timeoutMs: 300 }), false);
    assert.deepEqual(await py.children(ctx.p('fence_lock')), [pyNode.split('/').pop()]);
    const waiting = lock.acquire();
    assert.equal(await settles(waiting), false);
    await py.delete(pyNode);
    assert.equal(await waiting, true);
    await lock.release();
    // A Python ReadLock contender blocks our WriteLock but not our exclusive Lock (kazoo's rules).
    const pyReader = await pythonContender(py, ctx.p('fence_lock'), '__rlock__');
    assert.equal(await new Lock(ts, ctx.p('fence_lock'), opts()).acquire({ timeoutMs: 2000 }), true);
    const other = await ctx.client();
    assert.equal(await new WriteLock(other, ctx.p('fence_lock'), opts()).acquire({ timeoutMs: 300 }), false);
    await py.delete(pyReader);
  });

  it('breakHolder: a vouched-dead holder is deleted with its guard; a failed guard waits; the holder learns it lost', async () => {
    const [c1, c2] = [await ctx.client(), await ctx.client()];
    await c1.create(ctx.p('beat'), '1');
    const beat = await c1.get(ctx.p('beat'));
    const holder = new Lock(c1, ctx.p('fence'), opts('hv1'));
    assert.equal(await holder.acquire(), true);
    const lost: LostReason[] = [];
    holder.onLost((why) => lost.push(why));
    const seen: string[] = [];
    // The guard names an old heartbeat version: the holder showed life, so nothing is deleted.
    await c1.set(ctx.p('beat'), '2');
    const stale = new Lock(c2, ctx.p('fence'), opts('hv2'));
    const guard = (version: number) => (h: { identifier: string }) => {
      seen.push(h.identifier);
      return [{ type: 'check' as const, path: ctx.p('beat'), version }];
    };
    assert.equal(await stale.acquire({ timeoutMs: 300, breakHolder: guard(beat.stat.version) }), false);
    assert.equal(holder.held, true);
    assert.deepEqual(seen, ['hv1']);
    // Declining to break waits as usual.
    assert.equal(await stale.acquire({ timeoutMs: 300, breakHolder: () => undefined }), false);
    // The current version: the holder's node goes in one transaction with the check.
    const now = await c1.get(ctx.p('beat'));
    const breaker = new Lock(c2, ctx.p('fence'), opts('hv2'));
    assert.equal(await breaker.acquire({ timeoutMs: 2000, breakHolder: guard(now.stat.version) }), true);
    await ctx.eventually('the broken holder reported lost', () => lost.length > 0);
    assert.deepEqual(lost, ['lock node deleted']);
    assert.equal(holder.held, false);
    assert.deepEqual(await breaker.contenders(), ['hv2']);
  });

  it('breakHolder: a live waiter queued between a dead holder and us does not shield the holder', async () => {
    const [c1, c2, c3] = [await ctx.client(), await ctx.client(), await ctx.client()];
    const holder = new Lock(c1, ctx.p('fence2'), opts('hv1'));
    assert.equal(await holder.acquire(), true);
    const waiter = new Lock(c2, ctx.p('fence2'), opts('hv3'));
    const waiting = waiter.acquire({ timeoutMs: 5_000 });
    await ctx.eventually('the waiter queued', async () => (await c1.children(ctx.p('fence2'))).length === 2);
    const seen: string[] = [];
    const breaker = new Lock(c3, ctx.p('fence2'), opts('hv2'));
    const got = breaker.acquire({ timeoutMs: 300, breakHolder: (h) => (seen.push(h.identifier), h.identifier === 'hv1' ? [] : undefined) });
    // The holder is broken; the waiter (earlier than us) gets the lock first, as the queue says.
    assert.equal(await got, false);
    assert.ok(seen.includes('hv1'), `the holder was offered for breaking (offered: ${seen.join(', ')})`);
    assert.ok(!seen.includes('hv3') || seen.indexOf('hv1') < seen.indexOf('hv3'));
    assert.equal(await waiting, true);
    assert.equal(holder.held, false);
    await waiter.release();
  });

  it('a held lock reports lost when its session expires, and others can take it', async () => {
    const victim = await ctx.client({ sessionTimeoutMs: 4000 });
    const other = await ctx.client();
    const lock = new Lock(victim, ctx.p('primary'), opts());
    assert.equal(await lock.acquire(), true);
    const lost: LostReason[] = [];
    lock.onLost((why) => lost.push(why));
    await ctx.h.expireSession(victim);
    await ctx.eventually('the lock reported lost', () => lost.length > 0);
    assert.equal(lock.held, false);
    assert.equal(lost.length, 1);
    assert.equal(await new Lock(other, ctx.p('primary'), opts()).acquire({ timeoutMs: 5000 }), true);
    await victim.waitConnected();
    assert.equal(await lock.acquire({ timeoutMs: 300 }), false, 'the old holder queues like anyone else');
  });
}
