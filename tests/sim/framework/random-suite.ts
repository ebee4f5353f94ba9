import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runSeed } from './random.js';

/**
 * Registers one test per seed in [from, to): a random fault schedule checked against the
 * invariants. A failure prints the seed, the schedule and the log; reproduce it with
 * `PVC_SIM_SEED=<seed> node --conditions=development --import tsx --test tests/sim/random-1.test.ts`.
 */
export function randomSuite(from: number, to: number): void {
  const only = process.env.PVC_SIM_SEED;
  for (let seed = from; seed < to; seed++) {
    if (only !== undefined && Number(only) !== seed) continue;
    test(`random fault schedule, seed ${seed}`, async () => {
      const { violations, log, schedule } = await runSeed(seed);
      if (violations.length > 0) {
        assert.fail(`seed ${seed} broke invariants:\n  ${violations.join('\n  ')}\nschedule:\n  ${schedule.join('\n  ')}\nlog:\n${log.join('\n')}`);
      }
    });
  }
}
