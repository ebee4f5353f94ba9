import { test } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger, VirtualClock } from '@pvc/runtime';
import { FakeZkServer } from '@pvc/zk/testing';
import { NetworkCounter } from './network-count.js';

test('counts /networks children, follows changes, keeps the last count while ZK is unreachable', async () => {
  const clock = new VirtualClock(1_700_000_000_000);
  const server = new FakeZkServer({ clock });
  const admin = await server.connect();
  const ours = server.client({ sessionTimeoutMs: 10_000 });
  const counter = new NetworkCounter(ours, silentLogger());
  counter.start();
  await clock.advance(10);
  assert.equal(counter.value, 0, '/networks absent');
  assert.equal(counter.isKnown, true);
  await admin.ensurePath('/networks/100');
  await admin.ensurePath('/networks/200');
  await clock.advance(10);
  assert.equal(counter.value, 2);

  server.disconnect(ours);
  await admin.ensurePath('/networks/300');
  await clock.advance(1000);
  assert.equal(counter.value, 2, 'unreachable: last known value');
  server.reconnect(ours);
  await clock.advance(10);
  assert.equal(counter.value, 3, 'caught up after reconnecting');

  counter.stop();
  await admin.delete('/networks/300');
  await clock.advance(10);
  assert.equal(counter.value, 3, 'stopped: no more updates');
  await ours.close();
  await admin.close();
});

test('before Zookeeper is ever reached the count is 0 and not known', async () => {
  const clock = new VirtualClock(0);
  const server = new FakeZkServer({ clock });
  server.stop();
  const ours = server.client();
  const counter = new NetworkCounter(ours, silentLogger());
  counter.start();
  await clock.advance(5000);
  assert.equal(counter.value, 0);
  assert.equal(counter.isKnown, false);
  counter.stop();
  await ours.close();
});
