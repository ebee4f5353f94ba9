import { test } from 'node:test';
import assert from 'node:assert/strict';
import { memoryLogger } from '../testing/fakes.js';
import { witnessHost } from './witness-grpc.js';

test('the witness listens where the node name resolves: the first non-loopback address', async () => {
  const log = memoryLogger();
  assert.equal(await witnessHost('hv1', log.logger, () => Promise.resolve(['127.0.1.1', '10.0.0.1', '10.0.0.9'])), '10.0.0.1');
  assert.equal(log.lines.length, 0);
});

test('a name resolving to loopback only is used, with a warning that nobody else can reach it', async () => {
  const log = memoryLogger();
  assert.equal(await witnessHost('hv1', log.logger, () => Promise.resolve(['127.0.1.1'])), '127.0.1.1');
  assert.equal(log.messages(/loopback address only/).length, 1);
});

test('an address is used as it is; a name resolving to nothing is an error naming it', async () => {
  const log = memoryLogger();
  assert.equal(await witnessHost('10.0.0.3', log.logger, () => Promise.reject(new Error('not called'))), '10.0.0.3');
  await assert.rejects(witnessHost('hv1', log.logger, () => Promise.resolve([])), /the node name hv1 resolves to no address/);
});
