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
    down: [],
  });
});

test('vmd never answers: last values (stale) at the deadline; down from the 2nd miss, logged once; back logged once', async () => {
  const { g, clock, peers, host, log } = setup();
  await settle(clock, g.gather(DEADLINE));
  peers.knobs.mode = { resources: 'hang' };
  peers.resourcesValue = { runningDomains: ['changed'], memAllocMib: 1, memProvMib: 1, vcpuAlloc: 1 };
  host.loadValue = 2.25;
  for (let round = 0; round < 3; round++) {
    const { value: f, tookMs } = await settle(clock, g.gather(DEADLINE), { stepMs: 10 });
    assert.ok(tookMs <= DEADLINE, `took ${tookMs} ms`);
    assert.deepEqual(f.stale, ['vmd']);
    assert.deepEqual(f.down, round === 0 ? [] : ['vmd'], `round ${round}`);
    assert.deepEqual(f.resources.runningDomains, ['u1', 'u2'], 'the last known vmd figures');
    assert.equal(f.load1, 2.25, 'the other sources are fresh');
  }
  const downMsg = 'vmd is down: no figures for 2 keepalives; keepalives leave its keys out';
  assert.deepEqual(log.messages(/vmd/), ['no figures from vmd; this keepalive carries its last known figures', downMsg]);
  const warn = log.lines.find((l) => l.msg === downMsg);
  assert.equal(warn?.['peer'], 'vmd');
  assert.match(String(warn?.['err']), /DEADLINE_EXCEEDED/);
  assert.deepEqual(g.peers().find((p) => p.name === 'vmd'), { name: 'vmd', down: true, misses: 3, silentForMs: 3 * DEADLINE });

  peers.knobs.mode = {};
  for (let round = 0; round < 2; round++) {
    const { value: f } = await settle(clock, g.gather(DEADLINE));
    assert.deepEqual(f.stale, []);
    assert.deepEqual(f.down, []);
    assert.deepEqual(f.resources.runningDomains, ['changed']);
  }
  assert.deepEqual(log.messages(/vmd/).slice(2), ['vmd answers again; keepalives carry its figures again']);
  assert.deepEqual(g.peers(), [
    { name: 'netd', down: false, misses: 0, silentForMs: 0 },
    { name: 'vmd', down: false, misses: 0, silentForMs: 0 },
  ]);
});

test('one slow answer between answers is never down, however often it happens (the misses must be consecutive)', async () => {
  const { g, clock, peers, log } = setup();
  for (let round = 0; round < 6; round++) {
    peers.knobs.mode = round % 2 === 0 ? { networkStats: 'hang' } : {};
    const { value: f } = await settle(clock, g.gather(DEADLINE), { stepMs: 10 });
    assert.deepEqual(f.stale, round % 2 === 0 ? ['netd'] : []);
    assert.deepEqual(f.down, []);
  }
  assert.equal(log.lines.filter((l) => l['peer'] === 'netd' && l.level > 20).length, 0, 'nothing above debug');
});

test('failing peers (vmd down, netd down) at once: both stale, sorted, previous values kept', async () => {
  const { g, clock, peers } = setup();
  await settle(clock, g.gather(DEADLINE));
  peers.knobs.mode = { resources: 'fail', networkStats: 'fail' };
  peers.networkValue = { statsJson: '{"new":{}}', networkCount: 9 };
  const { value: f, tookMs } = await settle(clock, g.gather(DEADLINE));
  assert.equal(tookMs, 0);
  assert.deepEqual(f.stale, ['netd', 'vmd']);
  assert.deepEqual(f.down, [], 'one miss is not down');
  const { value: g2 } = await settle(clock, g.gather(DEADLINE));
  assert.deepEqual(g2.down, ['netd', 'vmd']);
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
