import { describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { mapLimit, retryUntilDone } from './concurrency.js';
import { VirtualClock } from './clock.js';

describe('mapLimit()', () => {
  it('keeps input order and never exceeds the limit', async () => {
    let running = 0;
    let peak = 0;
    const out = await mapLimit([5, 1, 4, 2, 3], 2, async (n) => {
      running++;
      peak = Math.max(peak, running);
      for (let i = 0; i < n; i++) await Promise.resolve();
      running--;
      return n * 10;
    });
    assert.deepEqual(out, [50, 10, 40, 20, 30]);
    assert.equal(peak, 2);
  });
  it('an empty list', async () => assert.deepEqual(await mapLimit([], 8, () => Promise.resolve(1)), []));
});

test('retryUntilDone: at once, then everyMs after each failed attempt, until done; an abort ends it', async () => {
  const clock = new VirtualClock(0);
  const at: number[] = [];
  const done = retryUntilDone(clock, 1_000, async () => (at.push(clock.now()), at.length === 3), new AbortController().signal);
  await clock.advance(5_000);
  await done;
  assert.deepEqual(at, [0, 1_000, 2_000]);
  const ac = new AbortController();
  let tries = 0;
  const never = retryUntilDone(clock, 1_000, async () => (tries++, false), ac.signal);
  await clock.advance(2_500);
  ac.abort();
  await never;
  assert.equal(tries, 3);
});

test('retryUntilDone with a doubling pause: 1, 2, 4, then at most 5 s between attempts', async () => {
  const clock = new VirtualClock(0);
  const at: number[] = [];
  const done = retryUntilDone(clock, { firstMs: 1_000, maxMs: 5_000 }, async () => (at.push(clock.now()), at.length === 6), new AbortController().signal);
  await clock.advance(30_000);
  await done;
  assert.deepEqual(at, [0, 1_000, 3_000, 7_000, 12_000, 17_000]);
});
