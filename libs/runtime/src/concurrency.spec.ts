import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mapLimit } from './concurrency.js';

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
