import { test } from 'node:test';
import assert from 'node:assert/strict';
import { flushMicrotasks, VirtualClock } from '@pvc/runtime';
import { FakeZkServer } from '@pvc/zk/testing';
import type { KeepalivedEvent } from './model.js';
import { SuicideWatch } from './suicide.js';
import { FigureGatherer } from './keepalive/figures.js';
import { KeepaliveLoop } from './keepalive/keepalive.js';
import { FakeHostStats, FakePeers, FakeSelfReset, memoryLogger, settle } from './testing/fakes.js';
import { seedBase, seedNode } from './testing/cluster.js';

const INTERVAL = 5_000;
const T0 = 1_700_000_000_000;

function rig(suicideIntervals: number): {
  clock: VirtualClock; peers: FakePeers; reset: FakeSelfReset; events: KeepalivedEvent[]; watch: SuicideWatch;
  beat: () => void; run: () => Promise<void>; log: ReturnType<typeof memoryLogger>;
} {
  const clock = new VirtualClock(T0);
  const peers = new FakePeers(clock);
  peers.runningVms = ['a', 'b', 'c'];
  const reset = new FakeSelfReset(clock);
  const events: KeepalivedEvent[] = [];
  const log = memoryLogger();
  let lastOk = clock.now();
  const watch = new SuicideWatch({
    self: 'hv3', clock, logger: log.logger, events: (e) => events.push(e), peers, reset,
    silentForMs: () => clock.now() - lastOk, intervalMs: INTERVAL, suicideIntervals,
  });
  const ac = new AbortController();
  return {
    clock, peers, reset, events, watch, log,
    beat: () => void (lastOk = clock.now()),
    run: () => watch.run(ac.signal),
  };
}

test('fires once after suicide_intervals × interval without a keepalive: stops every VM, then resets', async () => {
  const r = rig(3);
  const done = r.run();
  await r.clock.advance(14_999);
  assert.equal(r.reset.resets.length, 0);
  assert.equal(r.peers.calls.length, 0);
  await r.clock.advance(1);
  await settle(r.clock, done);
  assert.deepEqual(r.peers.calls.map((c) => [c.op, c.at, c.done?.result]), [['stopAllVms', T0 + 15_000, 'ok']]);
  assert.deepEqual(r.reset.resets, [{ at: T0 + 15_000, reason: 'no keepalive for 15 s' }]);
  assert.deepEqual(r.events, [{ kind: 'suicide', node: 'hv3', silentMs: 15_000, stopped: 3 }]);
  assert.equal(r.watch.triggered, true);
  await r.clock.advance(60_000);
  assert.equal(r.reset.resets.length, 1, 'once');
});

test('each successful keepalive restarts the count', async () => {
  const r = rig(3);
  const done = r.run();
  await r.clock.advance(10_000);
  r.beat();
  await r.clock.advance(14_000);
  assert.equal(r.reset.resets.length, 0);
  await r.clock.advance(1_000);
  await settle(r.clock, done);
  assert.equal(r.reset.resets[0]?.at, T0 + 25_000);
});

test('suicide_intervals 0 disables it: run returns at once and nothing ever happens', async () => {
  const r = rig(0);
  await settle(r.clock, r.run());
  await r.clock.advance(3_600_000);
  assert.equal(r.reset.resets.length, 0);
  assert.equal(r.peers.calls.length, 0);
  assert.equal(r.watch.triggered, false);
});

test('vmd failing or hanging does not stop the reset (the reset ends the VMs anyway)', async () => {
  const failing = rig(2);
  failing.peers.knobs.mode = { stopAllVms: 'fail' };
  await settle(failing.clock, failing.run(), { limitMs: 20_000 });
  assert.equal(failing.reset.resets.length, 1);
  assert.deepEqual(failing.events, [{ kind: 'suicide', node: 'hv3', silentMs: 10_000, stopped: 0 }]);
  assert.equal(failing.log.messages(/vmd did not stop the VMs/).length, 1);

  const hanging = rig(2);
  hanging.peers.knobs.mode = { stopAllVms: 'hang' };
  await settle(hanging.clock, hanging.run(), { limitMs: 30_000 });
  assert.equal(hanging.reset.resets[0]?.at, T0 + 10_000 + 5_000, 'bounded by the stop deadline');

  const partial = rig(2);
  partial.peers.knobs.stopFailures = new Set(['b']);
  await settle(partial.clock, partial.run(), { limitMs: 20_000 });
  assert.equal(partial.events[0]?.kind === 'suicide' && partial.events[0].stopped, 2);
  assert.equal(partial.log.lines.find((l) => /could not be stopped/.test(l.msg))?.['failed']?.toString(), 'b');
});

test('with the real keepalive loop: Zookeeper unreachable for suicide_intervals → reset; reachable → never', async () => {
  const clock = new VirtualClock(T0);
  const server = new FakeZkServer({ clock });
  const zk = await server.connect();
  await seedBase(zk);
  await seedNode(zk, T0, { name: 'hv3' });
  const log = memoryLogger();
  const peers = new FakePeers(clock);
  const loop = new KeepaliveLoop({
    node: 'hv3', zk, clock, logger: log.logger, events: () => undefined,
    figures: new FigureGatherer({ peers, host: new FakeHostStats(), logger: log.logger, clock }),
    settings: { intervalMs: INTERVAL, figuresDeadlineMs: 1_000, logKeepalives: false, logClusterDetails: false },
  });
  const reset = new FakeSelfReset(clock);
  const watch = new SuicideWatch({
    self: 'hv3', clock, logger: log.logger, events: () => undefined, peers, reset,
    silentForMs: () => loop.silentForMs(), intervalMs: INTERVAL, suicideIntervals: 4,
  });
  const ac = new AbortController();
  const loops = Promise.all([loop.run(ac.signal), watch.run(ac.signal)]);
  loops.catch(() => undefined);
  await clock.advance(60_000);
  assert.equal(reset.resets.length, 0, 'keepalives written: no reset');
  const lastOk = loop.lastKeepaliveMs;
  server.stop();
  await clock.advance(25_000);
  assert.ok(loop.missed >= 3, `missed ${loop.missed}`);
  assert.equal(reset.resets.length, 1);
  assert.ok((reset.resets[0]?.at ?? 0) - lastOk >= 4 * INTERVAL);
  assert.ok((reset.resets[0]?.at ?? 0) - lastOk <= 4 * INTERVAL + 1_000);
  ac.abort();
  server.start();
  await clock.advance(10_000);
  await flushMicrotasks();
});
