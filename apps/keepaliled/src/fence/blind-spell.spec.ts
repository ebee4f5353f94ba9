import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keptWindowStart, vouchedMs } from './blind-spell.js';

const I = 1_000;
const beats = (versionBefore: number, versionAfter: number, appearedAtMs: number, atMs: number, seenLive = true): number =>
  vouchedMs({ versionBefore, versionAfter, appearedAtMs, atMs, seenLive }, I);

test('vouchedMs: a peer that wrote at every tick vouches for all its beats but one', () => {
  assert.equal(beats(10, 13, 5_000, 8_500), 2_000);
  assert.equal(beats(10, 12, 5_000, 7_000), 1_000);
  assert.equal(beats(10, 12, 5_000, 8_000), 1_000, 'the next tick may be in flight');
});

test('vouchedMs: nothing for fewer than 2 beats (one write may follow a global outage\'s end)', () => {
  assert.equal(beats(10, 10, 5_000, 6_000), 0);
  assert.equal(beats(10, 11, 5_000, 6_000), 0);
  assert.equal(beats(10, 3, 5_000, 6_000), 0, 'the key was recreated');
});

test('vouchedMs: nothing when a tick was missed (writes were not taken throughout)', () => {
  assert.equal(beats(10, 12, 5_000, 8_001), 0);
  assert.equal(beats(10, 13, 5_000, 13_500), 0, 'an outage between two beats');
  assert.equal(vouchedMs({ versionBefore: 1, versionAfter: 5, appearedAtMs: 0, atMs: 1, seenLive: true }, 0), 0, 'no interval, no evidence');
});

test('vouchedMs: nothing from an anchor not seen live (it may be older than we saw it, hiding a missed tick)', () => {
  assert.equal(beats(10, 13, 5_000, 8_500, false), 0);
});

test('keptWindowStart: never later than the reset start, never earlier than the vouched span or one interval after the last sighting', () => {
  const at = 8_500;
  assert.equal(keptWindowStart({ appearedAtMs: 5_000, seenAtMs: at }, 2_000, at, I), 6_500);
  assert.equal(keptWindowStart({ appearedAtMs: 5_000, seenAtMs: at }, 3_000, at, I), 6_000, 'the span may end up to an interval before now');
  assert.equal(keptWindowStart({ appearedAtMs: 7_000, seenAtMs: at }, 2_000, at, I), 8_000);
  assert.equal(keptWindowStart({ appearedAtMs: 5_000, seenAtMs: 6_000 }, 1_000, at, I), 6_000, 'a restore never shortens a window');
  assert.equal(keptWindowStart({ appearedAtMs: 5_000, seenAtMs: at }, 0, at, I), at);
});
