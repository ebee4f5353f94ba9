import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from './clock.js';
import { AbortedError } from './errors.js';

test('virtual clock fires timers in time order, ties in creation order', async () => {
  const clock = new VirtualClock(1000);
  const seen: string[] = [];
  void clock.sleep(300).then(() => seen.push('b@300'));
  void clock.sleep(100).then(() => seen.push('a@100'));
  void clock.sleep(300).then(() => seen.push('c@300'));
  await clock.advance(200);
  assert.deepEqual(seen, ['a@100']);
  assert.equal(clock.now(), 1200);
  await clock.advance(100);
  assert.deepEqual(seen, ['a@100', 'b@300', 'c@300']);
});

test('virtual clock every() repeats until stopped', async () => {
  const clock = new VirtualClock();
  let n = 0;
  const stop = clock.every(5000, () => n++);
  await clock.advance(15_000);
  assert.equal(n, 3);
  stop();
  await clock.advance(15_000);
  assert.equal(n, 3);
  assert.equal(clock.pending(), 0);
});

test('a sleep rejects with AbortedError when its signal aborts', async () => {
  const clock = new VirtualClock();
  const ac = new AbortController();
  const p = clock.sleep(10_000, ac.signal);
  ac.abort();
  await assert.rejects(p, AbortedError);
  assert.equal(clock.pending(), 0);
});

test('sleep on an already-aborted signal rejects at once', async () => {
  const clock = new VirtualClock();
  await assert.rejects(clock.sleep(1, AbortSignal.abort()), AbortedError);
});
