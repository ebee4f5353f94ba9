import { test } from 'node:test';
import assert from 'node:assert/strict';
import { realClock } from '@pvc/runtime';
import { Lock } from './lock.js';
import { FakeZkServer } from './testing/fake-server.js';

const eventually = async (what: string, check: () => Promise<boolean>): Promise<void> => {
  const until = realClock.now() + 3_000;
  while (!(await check())) {
    if (realClock.now() > until) assert.fail(`not within 3 s: ${what}`);
    await realClock.sleep(20);
  }
};

test('a contender whose removal fails on connection trouble is removed once the session is back, not left to block the lock', async () => {
  const server = new FakeZkServer({ clock: realClock });
  const [a, b] = [await server.connect(), await server.connect()];
  const holder = new Lock(a, '/l', { clock: realClock, identifier: 'a' });
  assert.equal(await holder.acquire(), true);
  const waiter = new Lock(b, '/l', { clock: realClock, identifier: 'b' });
  const gave = waiter.acquire({ timeoutMs: 300 });
  await eventually('b queued', async () => (await a.children('/l')).length === 2);
  // The next write — the waiter's removal after its timeout — is lost on the wire.
  server.failNextWrite({ code: 'CONNECTION_LOSS' });
  assert.equal(await gave, false);
  await eventually('b’s contender removed', async () => (await a.children('/l')).length === 1);
  await holder.release();
  const next = new Lock(a, '/l', { clock: realClock, identifier: 'c' });
  assert.equal(await next.acquire({ timeoutMs: 500 }), true, 'nothing left blocks the lock');
});
