import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '@pvc/runtime';
import { nodeKeys, paths, readKeyWithStat, resetBadValueReports, type ZkClient } from '@pvc/zk';
import { FakeZkServer } from '@pvc/zk/testing';
import { LivenessTracker } from './liveness.js';
import { memoryLogger } from '../testing/fakes.js';
import { seedBase, seedNode } from '../testing/cluster.js';

const T0 = 1_700_000_000_000;

const INTERVAL = 1_000;

async function rig(opts: { self?: string } = {}): Promise<{ clock: VirtualClock; server: FakeZkServer; zk: ZkClient; writer: ZkClient; t: LivenessTracker; log: ReturnType<typeof memoryLogger> }> {
  const clock = new VirtualClock(T0);
  const server = new FakeZkServer({ clock });
  const writer = await server.connect();
  await seedBase(writer);
  await seedNode(writer, T0, { name: 'hv1' });
  await seedNode(writer, T0, { name: 'hv2', daemonState: 'init', domainState: 'flushed' });
  const zk = await server.connect({ sessionTimeoutMs: 10_000 });
  const log = memoryLogger();
  const t = new LivenessTracker({ zk, clock, logger: log.logger, self: opts.self ?? 'hv9', intervalMs: INTERVAL });
  t.start();
  await clock.advance(0);
  return { clock, server, zk, writer, t, log };
}

const beat = (zk: ZkClient, node: string, value: string): Promise<void> => zk.write([[paths.node(node).keepalive, value]]);

test('a fresh observer gives every node a full window from when it first saw it', async () => {
  const { clock, t } = await rig();
  assert.equal(t.silentForMs('hv1'), 0);
  await clock.advance(12_000);
  assert.equal(t.silentForMs('hv1'), 12_000);
  assert.equal(t.silentForMs('hv2'), 12_000);
  assert.equal(t.sighting('hv1')?.epoch, Math.floor(T0 / 1000));
  assert.equal(t.silentForMs('unknown'), undefined);
  t.stop();
});

test('sightings update on every version change, even when the same value is written again', async () => {
  const { clock, t, writer } = await rig();
  await clock.advance(7_000);
  const v0 = t.sighting('hv1')?.version ?? -1;
  await beat(writer, 'hv1', '1700000007');
  await clock.advance(0);
  assert.equal(t.silentForMs('hv1'), 0);
  assert.equal(t.sighting('hv1')?.version, v0 + 1);
  assert.equal(t.sighting('hv1')?.epoch, 1700000007);
  await clock.advance(3_000);
  await beat(writer, 'hv1', '1700000007');
  await clock.advance(0);
  assert.equal(t.silentForMs('hv1'), 0, 'same value, new version: the node is alive');
  assert.equal(t.silentForMs('hv2'), 10_000, 'other nodes unaffected');
  t.stop();
});

test('the node\'s own epoch is not trusted: a keepalive far in the past still counts as a sighting', async () => {
  const { clock, t, writer } = await rig();
  await clock.advance(20_000);
  await beat(writer, 'hv1', '1000'); // node clock way behind
  await clock.advance(0);
  assert.equal(t.silentForMs('hv1'), 0);
  t.stop();
});

test('a non-numeric keepalive is logged once per value, with the key, and still counted', async () => {
  resetBadValueReports();
  const { clock, t, writer, log } = await rig();
  const bad = (): unknown[] => log.lines.filter((l) => /^bad value in Zookeeper/.test(l.msg) && l['key'] === paths.node('hv1').keepalive).map((l) => l['value']);
  for (const junk of ['garbage', 'None', '17e8', 'garbage']) {
    await clock.advance(5_000);
    await beat(writer, 'hv1', junk);
    await clock.advance(0);
    assert.equal(t.silentForMs('hv1'), 0, `${junk} counted as a sighting`);
    assert.equal(t.sighting('hv1')?.epoch, undefined);
  }
  assert.deepEqual(bad(), ['garbage', 'None', '17e8']);
  await beat(writer, 'hv1', '1700000100');
  await clock.advance(0);
  assert.equal(t.sighting('hv1')?.epoch, 1700000100);
  t.stop();
});

test('after our own connection comes back every sighting is reset (we were blind meanwhile)', async () => {
  const { clock, t, server, zk } = await rig();
  await clock.advance(20_000);
  server.disconnect(zk);
  await clock.advance(6_000);
  assert.equal(t.silentForMs('hv1'), 26_000);
  server.reconnect(zk);
  await clock.advance(0);
  assert.equal(zk.state, 'connected');
  assert.equal(t.silentForMs('hv1'), 0);
  assert.equal(t.silentForMs('hv2'), 0);
  t.stop();
});

test('after our session expired and a new one came up every sighting is reset too', async () => {
  const { clock, t, server, zk } = await rig();
  await clock.advance(20_000);
  server.expireSession(zk);
  await clock.advance(1_000);
  assert.equal(zk.state, 'connected');
  assert.ok((t.silentForMs('hv1') ?? Infinity) <= 1_000);
  t.stop();
});

test('nodes(): watched daemon and domain states, sorted; a removed node is forgotten', async () => {
  const { clock, t, writer } = await rig();
  await seedNode(writer, T0, { name: 'hv0', daemonState: 'dead', domainState: 'fence-flush' });
  await writer.write([[paths.node('hv2').daemonState, 'run']]);
  await clock.advance(0);
  assert.deepEqual(t.nodes(), [
    { name: 'hv0', daemonState: 'dead', domainState: 'fence-flush' },
    { name: 'hv1', daemonState: 'run', domainState: 'ready' },
    { name: 'hv2', daemonState: 'run', domainState: 'flushed' },
  ]);
  await writer.delete(paths.node('hv0').root);
  await clock.advance(0);
  assert.deepEqual(t.nodes().map((n) => n.name), ['hv1', 'hv2']);
  assert.equal(t.sighting('hv0'), undefined);
  t.stop();
});

test('observe(): a re-read of the same version keeps the old sighting; a new version refreshes it', async () => {
  const { clock, t, writer, zk } = await rig();
  await clock.advance(9_000);
  const same = await readKeyWithStat(zk, nodeKeys('hv1').keepalive);
  assert.ok(same);
  t.observe('hv1', same.stat.version, same.value);
  assert.equal(t.silentForMs('hv1'), 9_000);
  t.stop(); // watches off: only observe() can notice the change now
  await beat(writer, 'hv1', '1700000009');
  await clock.advance(1_000);
  assert.equal(t.silentForMs('hv1'), 10_000);
  const fresh = await readKeyWithStat(zk, nodeKeys('hv1').keepalive);
  assert.ok(fresh);
  t.observe('hv1', fresh.stat.version, fresh.value);
  assert.equal(t.silentForMs('hv1'), 0);
});

test('an unknown daemon or domain state is logged once per value with its key, reads as unknown, and matches no rule', async () => {
  resetBadValueReports();
  const { clock, t, writer, log } = await rig();
  await writer.write([[paths.node('hv1').daemonState, 'zombie'], [paths.node('hv1').domainState, 'half-flushed']]);
  await clock.advance(0);
  await writer.write([[paths.node('hv1').daemonState, 'zombie2']]);
  await clock.advance(0);
  await writer.write([[paths.node('hv1').daemonState, 'zombie']]);
  await clock.advance(0);
  const warned = log.lines.filter((l) => /^bad value in Zookeeper/.test(l.msg)).map((l) => [l['key'], l['value']]);
  const k = paths.node('hv1');
  assert.deepEqual(warned.sort(), [[k.daemonState, 'zombie'], [k.daemonState, 'zombie2'], [k.domainState, 'half-flushed']].sort());
  assert.deepEqual(t.nodes().find((n) => n.name === 'hv1'), { name: 'hv1', daemonState: undefined, domainState: undefined });
  t.stop();
});

test('onStateChange: called when a daemon or domain state changes (not for keepalives, not for the same value again)', async () => {
  const { clock, t, writer } = await rig();
  let calls = 0;
  const off = t.onStateChange(() => void (calls += 1));
  await beat(writer, 'hv1', '1700000009');
  await clock.advance(0);
  assert.equal(calls, 0, 'a keepalive is not a state change');
  await writer.write([[paths.node('hv2').domainState, 'ready']]);
  await clock.advance(0);
  assert.equal(calls, 1);
  assert.equal(t.nodes().find((n) => n.name === 'hv2')?.domainState, 'ready', 'the new state is readable when the listener runs');
  await writer.write([[paths.node('hv1').daemonState, 'run']]);
  await clock.advance(0);
  assert.equal(calls, 1, 'the same value written again');
  await writer.write([[paths.node('hv1').daemonState, 'dead']]);
  await clock.advance(0);
  assert.equal(calls, 2);
  off();
  await writer.write([[paths.node('hv1').daemonState, 'fenced']]);
  await clock.advance(0);
  assert.equal(calls, 2, 'unsubscribed');
  t.stop();
});
