import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cutOffReach, healthyReach } from './fakes.js';
import { describeVerdict, judgeOutage, majorityOf, type PeerAnswer } from './verdict.js';

const cut = (c: string, self = false): PeerAnswer => ({ coordinator: c, self, reach: cutOffReach(c, 'not currently serving requests') });
const up = (c: string): PeerAnswer => ({ coordinator: c, self: false, reach: healthyReach(c) });
const silent = (c: string): PeerAnswer => ({ coordinator: c, self: false, error: 'no answer within 2000 ms' });

test('a strict majority of the coordinators: 1 of 1, 2 of 2, 2 of 3, 3 of 4, 3 of 5', () => {
  assert.deepEqual([1, 2, 3, 4, 5].map(majorityOf), [1, 2, 2, 3, 3]);
});

test('global iff a strict majority confirm (session down AND server not serving); the answers are listed in coordinator order', () => {
  const five = ['hv1', 'hv2', 'hv3', 'hv4', 'hv5'];
  const table: [string, PeerAnswer[], boolean][] = [
    ['3 of 5 confirm', [cut('hv1'), cut('hv2'), cut('hv3', true), silent('hv4'), up('hv5')], true],
    ['2 of 5 confirm, 3 silent', [cut('hv1'), cut('hv2'), silent('hv3'), silent('hv4'), silent('hv5')], false],
    ['2 of 4 is not a majority', [cut('hv1'), cut('hv2'), silent('hv3'), silent('hv4')], false],
  ];
  for (const [name, answers, global] of table) {
    const coordinators = five.slice(0, answers.length);
    assert.equal(judgeOutage(coordinators, answers).global, global, name);
  }
  const v = judgeOutage(['hv1', 'hv2', 'hv3'], [up('hv3'), silent('hv2'), cut('hv1', true)]);
  assert.deepEqual(v, {
    global: false, confirmed: ['hv1'], needed: 2, coordinators: 3,
    answers: ['hv1 (self) cut off (not currently serving requests)', 'hv2 no answer (no answer within 2000 ms)', 'hv3 reaches Zookeeper'],
  });
  assert.equal(describeVerdict(v), '1 of 3 coordinators cannot reach Zookeeper (2 needed): hv1 (self) cut off (not currently serving requests), hv2 no answer (no answer within 2000 ms), hv3 reaches Zookeeper');
});

test('a single coordinator that confirms is the whole ensemble: global', () => {
  assert.equal(judgeOutage(['hv1'], [cut('hv1')]).global, true);
});

test('never global without coordinators, nor with a coordinator nobody asked', () => {
  assert.equal(judgeOutage([], []).global, false);
  const v = judgeOutage(['hv1', 'hv2', 'hv3'], [cut('hv1'), cut('hv9')]);
  assert.equal(v.global, false);
  assert.match(v.answers[1] ?? '', /hv2 no answer \(not asked\)/);
});

test('half-cut answers do not confirm: session up, server serving, server unknown, wrong node', () => {
  const base = cutOffReach('hv1');
  for (const reach of [{ ...base, sessionConnected: true }, { ...base, server: 'serving' as const }, { ...base, server: 'unknown' as const }, { ...base, node: 'hv2' }]) {
    assert.deepEqual(judgeOutage(['hv1'], [{ coordinator: 'hv1', self: false, reach }]).confirmed, []);
  }
});
