import { test } from 'node:test';
import assert from 'node:assert/strict';
import { peerAskBoundMs, peerCheckDelayMs, resetWaitMs, suicideStepMs } from './rules.js';

test('suicide step and peer ask bound: min(interval, 1 s) and min(interval, 2 s)', () => {
  assert.deepEqual([suicideStepMs(5_000), suicideStepMs(500)], [1_000, 500]);
  assert.deepEqual([peerAskBoundMs(5_000), peerAskBoundMs(1_000)], [2_000, 1_000]);
});

test('the reset wait grows by the peer check delay when the check is on', () => {
  // 3 × 5 s + max(5 s, 5 s) = 20 s; the delay: 15 s window + 5 s interval + 3 × (1 s + 2 s) = 29 s.
  assert.equal(resetWaitMs(5_000, 3), 20_000);
  assert.equal(peerCheckDelayMs(5_000, 3), 29_000);
  assert.equal(resetWaitMs(5_000, 3, { peerCheck: true }), 49_000);
  // The simulator's timings: 1 s interval, suicide 2.
  assert.equal(resetWaitMs(1_000, 2, { peerCheck: true }), 7_000 + 2_000 + 1_000 + 6_000);
  assert.equal(resetWaitMs(5_000, 0, { peerCheck: true }), undefined, 'no suicide: no wait (VMs are left)');
});
