import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '@pvc/runtime';
import { FigureGatherer } from './figures.js';
import { FakeHostStats, FakePeers, memoryLogger, settle } from '../testing/fakes.js';

const DEADLINE = 1_000;

function setup(): { clock: VirtualClock; peers: FakePeers; host: FakeHostStats; g: FigureGatherer; log: ReturnType<typeof memoryLogger> } {
  const clock = new VirtualClock(1_000_000);
  const peers = new FakePeers(clock);
  peers.resourcesValue = { runningDomains: ['u1', 'u2'], memAllocMib: 3072, memProvMib: 4096, vcpuAlloc: 6 };
  peers.networkValue = { statsJson: '{"eno1":{"rx_bps":1}}', networkCount: 3 };
  const host = new FakeHostStats();
  const log = memoryLogger();
  return { clock, peers, host, log, g: new FigureGatherer({ peers, host, logger: log.logger, clock }) };
}

test('all sources answer: every figure is fresh and nothing is stale', async () => {
  const { g, clock } = setup();
  const { value: f, tookMs } = await settle(clock, g.gather(DEADLINE), { stepMs: 10 });
  assert.equal(tookMs, 0);
  assert.deepEqual(f, {
    memory: { totalMiB: 16_000, usedMiB: 4_000, freeMiB: 12_000 },
    load1: 0.5,
    resources: { runningDomains: ['u1', 'u2'], memAllocMib: 3072, memProvMib: 4096, vcpuAlloc: 6 },
    networkStatsJson: '{"eno1":{"rx_bps":1}}',
    networkCount: 3,
    stale: [],
  });
});

test('vmd never answers: figures come back at the deadline with its last values, stale [vmd]; logged once; recovery logged once', async () => {
  const { g, clock, peers, host, log } = setup();
  await settle(clock, g.gather(DEADLINE));
  peers.knobs.mode = { resources: 'hang' };
  peers.resourcesValue = { runningDomains: ['changed'], memAllocMib: 1, memProvMib: 1, vcpuAlloc: 1 };
  host.loadValue = 2.25;
  for (let round = 0; round < 3; round++) {
    const { value: f, tookMs } = await settle(clock, g.gather(DEADLINE), { stepMs: 10 });
    assert.ok(tookMs <= DEADLINE, `took ${tookMs} ms`);
    assert.deepEqual(f.stale, ['vmd']);
    assert.deepEqual(f.resources.runningDomains, ['u1', 'u2'], 'the last known vmd figures');
    assert.equal(f.load1, 2.25, 'the other sources are fresh');
  }
  assert.deepEqual(log.messages(/vmd/), ['figures from vmd unavailable; keepalives carry its last known figures']);
  const warn = log.lines.find((l) => /vmd unavailable/.test(l.msg));
  assert.equal(warn?.['peer'], 'vmd');
  assert.match(String(warn?.['err']), /DEADLINE_EXCEEDED/);

  peers.knobs.mode = {};
  for (let round = 0; round < 2; round++) {
    const { value: f } = await settle(clock, g.gather(DEADLINE));
    assert.deepEqual(f.stale, []);
    assert.deepEqual(f.resources.runningDomains, ['changed']);
  }
  assert.deepEqual(log.messages(/vmd/), ['figures from vmd unavailable; keepalives carry its last known figures', 'figures from vmd are fresh again']);
});

test('failing peers (vmd down, netd down) at once: both stale, sorted, previous values kept', async () => {
  const { g, clock, peers } = setup();
  await settle(clock, g.gather(DEADLINE));
  peers.knobs.mode = { resources: 'fail', networkStats: 'fail' };
  peers.networkValue = { statsJson: '{"new":{}}', networkCount: 9 };
  const { value: f, tookMs } = await settle(clock, g.gather(DEADLINE));
  assert.equal(tookMs, 0);
  assert.deepEqual(f.stale, ['netd', 'vmd']);
  assert.equal(f.networkStatsJson, '{"eno1":{"rx_bps":1}}');
  assert.equal(f.networkCount, 3);
});

test('a wedged host read is bounded by the deadline too (stale [host]); a first failure leaves zeros, not garbage', async () => {
  const { g, clock, host, peers, log } = setup();
  host.mode = 'hang';
  peers.knobs.mode = { resources: 'fail' };
  const { value: f, tookMs } = await settle(clock, g.gather(DEADLINE), { stepMs: 10 });
  assert.equal(tookMs, DEADLINE);
  assert.deepEqual(f.stale, ['host', 'vmd']);
  assert.deepEqual(f.memory, { totalMiB: 0, usedMiB: 0, freeMiB: 0 });
  assert.deepEqual(f.resources, { runningDomains: [], memAllocMib: 0, memProvMib: 0, vcpuAlloc: 0 });
  assert.equal(log.messages(/host unavailable/).length, 1);
  assert.equal(clock.pending(), 0, 'no deadline timer is left behind');
});

test('netd answering an empty stats string is reported as "{}" (valid JSON)', async () => {
  const { g, clock, peers } = setup();
  peers.networkValue = { statsJson: '', networkCount: 0 };
  const { value: f } = await settle(clock, g.gather(DEADLINE));
  assert.equal(f.networkStatsJson, '{}');
});

test('a peer that ignores its deadline still cannot hold the figures past it', async () => {
  const { g, clock, peers } = setup();
  peers.knobs = { mode: { resources: 'hang' }, ignoreDeadline: true };
  const { value: f, tookMs } = await settle(clock, g.gather(DEADLINE), { stepMs: 10, limitMs: 5 * DEADLINE });
  assert.ok(tookMs <= DEADLINE);
  assert.deepEqual(f.stale, ['vmd']);
});
