import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { clusterHealth } from './faults.js';

describe('clusterHealth(): 100 − Σ delta of un-acked faults, at least 0', () => {
  const cases: [string, { status: string; delta: number }[], number][] = [
    ['no faults', [], 100],
    ['one new fault', [{ status: 'new', delta: 10 }], 90],
    ['acked faults do not count', [{ status: 'ack', delta: 50 }, { status: 'new', delta: 5 }], 95],
    ['a status that is neither counts (not acknowledged)', [{ status: 'bogus', delta: 10 }], 90],
    ['never below 0', [{ status: 'new', delta: 50 }, { status: 'new', delta: 50 }, { status: 'new', delta: 10 }], 0],
    ['negative or NaN deltas count as 0', [{ status: 'new', delta: -20 }, { status: 'new', delta: Number.NaN }], 100],
  ];
  for (const [what, faults, want] of cases) it(`${what} → ${want}`, () => assert.equal(clusterHealth(faults), want));
});
