import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '@pvc/runtime';
import { memoryLogger, settle } from '../testing/fakes.js';
import { cutOffReach, FakeWitnessEndpoint } from './fakes.js';
import { WitnessServer } from './serve.js';

test('a witness that cannot listen logs once and retries every 10 s; serving, it answers afresh; shutdown closes it', async () => {
  const clock = new VirtualClock(0);
  const endpoint = new FakeWitnessEndpoint();
  endpoint.failures = 2;
  const log = memoryLogger();
  let asked = 0;
  const server = new WitnessServer({ endpoint, clock, logger: log.logger, answer: () => Promise.resolve({ ...cutOffReach('hv1'), msSinceKeepalive: ++asked }) });
  const ac = new AbortController();
  const done = server.run(ac.signal);
  await clock.advance(19_999);
  assert.equal(endpoint.attempts, 2);
  await clock.advance(1);
  assert.equal(endpoint.attempts, 3);
  assert.equal(log.messages(/cannot serve the suicide peer check/).length, 1, 'once per episode');
  assert.equal(log.messages(/serving the suicide peer check/).length, 1);
  assert.equal((await endpoint.handler?.(ac.signal))?.msSinceKeepalive, 1);
  assert.equal((await endpoint.handler?.(ac.signal))?.msSinceKeepalive, 2);
  ac.abort();
  await settle(clock, done);
  assert.equal(endpoint.closed, 1);
  assert.equal(endpoint.handler, undefined);
});

test('shutdown while waiting to retry ends the loop', async () => {
  const clock = new VirtualClock(0);
  const endpoint = new FakeWitnessEndpoint();
  endpoint.failures = 99;
  const ac = new AbortController();
  const done = new WitnessServer({ endpoint, clock, logger: memoryLogger().logger, answer: () => Promise.resolve(cutOffReach('hv1')) }).run(ac.signal);
  await clock.advance(5_000);
  ac.abort();
  await settle(clock, done);
  assert.equal(endpoint.attempts, 1);
});
