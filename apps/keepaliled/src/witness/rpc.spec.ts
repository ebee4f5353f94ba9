import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cutOffReach } from './fakes.js';
import { fromMessage, toMessage } from './rpc.js';

test('a reach crosses the wire unchanged', () => {
  const r = cutOffReach('hv1');
  assert.deepEqual(fromMessage(toMessage(r)), r);
});

test('a server state we do not know reads as unknown (it never confirms an outage)', () => {
  const m = { ...toMessage(cutOffReach('hv1')), serverState: 'NOT_SERVING' };
  assert.deepEqual(fromMessage(m), { ...cutOffReach('hv1'), server: 'unknown', serverDetail: 'unknown server state "NOT_SERVING"' });
});
