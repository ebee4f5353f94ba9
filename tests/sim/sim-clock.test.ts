/**
 * The simulator's clock (framework/sim-clock.ts) keeps VirtualClock's contract: the same sleeps,
 * cancellations and repeating timers fire in the same order at the same instants on both.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AbortedError, VirtualClock, type Clock } from '@pvc/runtime';
import { prng } from './framework/random.js';
import { SimClock } from './framework/sim-clock.js';

type Advancing = Clock & { advance(ms: number): Promise<void>; pending(): number };

/** A seeded mix of sleeps (some aborted before, at or after they fall due), ties and every(). */
async function trace(clock: Advancing, seed: number): Promise<string[]> {
  const r = prng(seed);
  const int = (lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));
  const seen: string[] = [];
  const at = (what: string): void => void seen.push(`${clock.now() % 1_000_000} ${what}`);
  const stops: (() => void)[] = [];
  for (let step = 0; step < 60; step++) {
    for (let i = 0; i < 20; i++) {
      const id = `${step}.${i}`;
      const ac = new AbortController();
      const ms = int(0, 4) * 250;
      clock.sleep(ms, ac.signal).then(() => at(`sleep ${id}`), (e: unknown) => at(`abort ${id} ${e instanceof AbortedError}`));
      if (r() < 0.4) void clock.sleep(int(0, 3) * 250).then(() => ac.abort());
    }
    if (r() < 0.1) stops.push(clock.every(int(1, 4) * 250, () => at(`every ${step}`)));
    if (r() < 0.1) stops.shift()?.();
    await clock.advance(int(0, 3) * 125);
  }
  for (const stop of stops) stop();
  await clock.advance(5_000);
  seen.push(`pending ${clock.pending()}`);
  return seen;
}

test('the sim clock fires what VirtualClock fires, in the same order', async () => {
  for (const seed of [1, 2, 3]) {
    const expected = await trace(new VirtualClock(1_800_000_000_000, 2), seed);
    const actual = await trace(new SimClock(1_800_000_000_000, 2), seed);
    assert.ok(expected.length > 1000, `seed ${seed}: a real trace (${expected.length} lines)`);
    assert.deepEqual(actual, expected, `seed ${seed}`);
  }
});
