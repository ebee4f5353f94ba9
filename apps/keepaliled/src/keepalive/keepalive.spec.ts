import { test } from 'node:test';
import assert from 'node:assert/strict';
import { flushMicrotasks, VirtualClock } from '@pvc/runtime';
import { paths, type ZkClient } from '@pvc/zk';
import { FakeZkServer } from '@pvc/zk/testing';
import type { KeepalivedEvent } from '../model.js';
import { FigureGatherer } from './figures.js';
import { KeepaliveLoop } from './keepalive.js';
import { FakeHostStats, FakePeers, memoryLogger, settle } from '../testing/fakes.js';
import { interceptZk, seedBase, seedNode } from '../testing/cluster.js';

const INTERVAL = 5_000;
const FIG_DEADLINE = 1_000;
const T0 = 1_700_000_000_400;
const k = paths.node('hv1');

interface Rig {
  clock: VirtualClock;
  server: FakeZkServer;
  raw: ZkClient;
  spy: ReturnType<typeof interceptZk>;
  peers: FakePeers;
  host: FakeHostStats;
  loop: KeepaliveLoop;
  events: KeepalivedEvent[];
  results: boolean[];
  log: ReturnType<typeof memoryLogger>;
  stop: () => Promise<void>;
}

async function rig(daemonState = 'init', start = true): Promise<Rig> {
  const clock = new VirtualClock(T0);
  const server = new FakeZkServer({ clock });
  const raw = await server.connect();
  await seedBase(raw);
  await seedNode(raw, clock.now() - 60_000, { name: 'hv1', daemonState });
  const spy = interceptZk(raw, clock);
  const peers = new FakePeers(clock);
  peers.resourcesValue = { runningDomains: ['u1', 'u2', 'u3'], memAllocMib: 3072.4, memProvMib: 5120, vcpuAlloc: 7 };
  peers.networkValue = { statsJson: '{"eno1":{"rx_bps":8000,"state":"up"}}', networkCount: 2 };
  const host = new FakeHostStats();
  host.memoryValue = { totalMiB: 64299, usedMiB: 17424.4, freeMiB: 48828.6 };
  host.loadValue = 1.23456;
  const log = memoryLogger();
  const events: KeepalivedEvent[] = [];
  const loop = new KeepaliveLoop({
    node: 'hv1', zk: spy.zk, clock, logger: log.logger, events: (e) => events.push(e),
    figures: new FigureGatherer({ peers, host, logger: log.logger, clock }),
    settings: { intervalMs: INTERVAL, figuresDeadlineMs: FIG_DEADLINE, logKeepalives: true, logClusterDetails: true },
  });
  const results: boolean[] = [];
  loop.onResult((ok) => results.push(ok));
  const ac = new AbortController();
  const running = start ? loop.run(ac.signal) : Promise.resolve();
  await flushMicrotasks();
  return {
    clock, server, raw, spy, peers, host, loop, events, results, log,
    stop: async () => {
      ac.abort();
      // A keepalive in flight when the signal aborts is abandoned with its abort error.
      await settle(clock, running.catch((err: unknown) => assert.match(String(err), /abort/i)), { limitMs: 2 * INTERVAL });
    },
  };
}

const keepalives = (r: Rig): number[] => r.spy.writes.filter((w) => w.paths.includes(k.keepalive)).map((w) => w.at);

test('first keepalive at once: one transaction with every key, encoded as the original does', async () => {
  const r = await rig('init');
  const w = r.spy.writes.filter((x) => x.paths.includes(k.keepalive));
  assert.equal(w.length, 1, 'one transaction');
  assert.equal(w[0]?.kind, 'write');
  assert.equal(w[0]?.at, T0, 'at once, not one interval after start');
  assert.deepEqual(w[0]?.data, {
    [k.memTotal]: '64299', [k.memUsed]: '17424', [k.memFree]: '48829',
    [k.memAlloc]: '3072', [k.memProv]: '5120', [k.vcpuAlloc]: '7',
    [k.cpuLoad]: '1.23', [k.domainsCount]: '3', [k.runningDomains]: 'u1 u2 u3',
    [k.networkStats]: '{"eno1":{"rx_bps":8000,"state":"up"}}',
    [k.keepalive]: '1700000000',
    [k.daemonState]: 'run',
  });
  const dump = r.server.dump(k.root);
  assert.equal(dump[k.keepalive], '1700000000');
  assert.equal(dump[k.daemonState], 'run');
  assert.equal(dump[k.cpuLoad], '1.23');
  assert.deepEqual(r.results, [true]);
  assert.equal(r.loop.lastKeepaliveMs, T0);
  assert.deepEqual(r.events, [{ kind: 'daemon-state', node: 'hv1', from: 'init', to: 'run', reason: 'keepalive' }]);
  await r.stop();
});

test('cpuload of an integral load is a Python float ("2.0"); no VMs → runningdomains "" and domainscount "0"', async () => {
  const r = await rig('run', false);
  r.host.loadValue = 2;
  r.peers.resourcesValue = { runningDomains: [], memAllocMib: 0, memProvMib: 0, vcpuAlloc: 0 };
  assert.equal(await r.loop.tick(), true);
  const dump = r.server.dump(k.root);
  assert.equal(dump[k.cpuLoad], '2.0');
  assert.equal(dump[k.runningDomains], '');
  assert.equal(dump[k.domainsCount], '0');
});

for (const from of ['dead', 'fenced']) {
  test(`daemonstate ${from} → run on the node's next keepalive, reported once`, async () => {
    const r = await rig(from);
    await r.clock.advance(3 * INTERVAL);
    assert.equal(r.server.dump(k.root)[k.daemonState], 'run');
    assert.deepEqual(r.events.filter((e) => e.kind === 'daemon-state'), [{ kind: 'daemon-state', node: 'hv1', from, to: 'run', reason: 'keepalive' }]);
    const later = r.spy.writes.filter((w) => w.paths.includes(k.keepalive)).slice(1);
    assert.ok(later.length >= 3);
    assert.ok(later.every((w) => !w.paths.includes(k.daemonState)), 'run is not rewritten every time');
    await r.stop();
  });
}

for (const kept of ['shutdown', 'stop']) {
  test(`daemonstate ${kept} is left alone (the supervisor owns it), also by the first keepalive`, async () => {
    const r = await rig(kept);
    await r.clock.advance(2 * INTERVAL);
    assert.equal(keepalives(r).length, 3);
    assert.equal(r.server.dump(k.root)[k.daemonState], kept);
    assert.ok(r.spy.writes.every((w) => !w.paths.includes(k.daemonState)));
    assert.deepEqual(r.events, []);
    await r.stop();
  });
}

test('a failed write: nothing of it applied, missed counted, keepalive-failed emitted; the next success resets missed', async () => {
  const r = await rig('run');
  const before = r.server.dump(k.root);
  // Each keepalive tries twice (the second time after moving to another server): 4 failures = 2 misses.
  r.server.failNextWrite({ count: 4 });
  r.peers.resourcesValue = { runningDomains: [], memAllocMib: 0, memProvMib: 0, vcpuAlloc: 0 };
  await r.clock.advance(INTERVAL);
  assert.equal(r.loop.missed, 1);
  const after = r.server.dump(k.root);
  assert.equal(after[k.keepalive], before[k.keepalive], 'timestamp not written');
  assert.equal(after[k.runningDomains], before[k.runningDomains], 'figures not written either: one transaction');
  await r.clock.advance(INTERVAL);
  assert.equal(r.loop.missed, 2);
  assert.equal(r.loop.silentForMs(), 2 * INTERVAL);
  const failed = r.events.filter((e) => e.kind === 'keepalive-failed');
  assert.deepEqual(failed.map((e) => e.kind === 'keepalive-failed' && e.missed), [1, 2]);
  assert.match(failed[0]?.kind === 'keepalive-failed' ? failed[0].error : '', /CONNECTION_LOSS|connection/i);
  await r.clock.advance(INTERVAL);
  assert.equal(r.loop.missed, 0);
  assert.equal(r.loop.silentForMs(), 0);
  assert.deepEqual(r.results, [true, false, false, true]);
  assert.equal(r.log.messages(/keepalives are written again/).length, 1);
  await r.stop();
});

test('one lost answer: the connection is dropped and the keepalive written again within the same interval', async () => {
  const r = await rig('run');
  r.server.failNextWrite({ count: 1 });
  await r.clock.advance(INTERVAL);
  assert.equal(r.loop.missed, 0);
  assert.deepEqual(r.results, [true, true]);
  assert.ok(r.loop.silentForMs() < INTERVAL, 'written in this interval');
  assert.equal(r.events.filter((e) => e.kind === 'keepalive-failed').length, 0);
  await r.stop();
});

test('fixed schedule: keepalives every interval from start, whatever each one took', async () => {
  const r = await rig('run');
  r.spy.hold.fn = (w) => (w.paths.includes(k.keepalive) ? r.clock.sleep(700) : Promise.resolve());
  await r.clock.advance(4 * INTERVAL);
  assert.deepEqual(keepalives(r), [T0, T0 + 1 * INTERVAL + 0, T0 + 2 * INTERVAL, T0 + 3 * INTERVAL, T0 + 4 * INTERVAL]);
  await r.stop();
});

test('a slow keepalive makes the next one skipped, never two at once, and the schedule keeps its phase', async () => {
  const r = await rig('run');
  let inFlight = 0;
  let maxInFlight = 0;
  r.spy.hold.fn = async (w) => {
    if (!w.paths.includes(k.keepalive)) return;
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    // The second keepalive (at T0+5 s) takes 7 s; the others are instant.
    if (w.at === T0 + INTERVAL) await r.clock.sleep(7_000);
    inFlight--;
  };
  await r.clock.advance(5 * INTERVAL);
  assert.deepEqual(keepalives(r), [T0, T0 + INTERVAL, T0 + 3 * INTERVAL, T0 + 4 * INTERVAL, T0 + 5 * INTERVAL]);
  assert.equal(maxInFlight, 1);
  await r.stop();
});

test('a peer that hangs never makes the write late: it goes out at the figures deadline with stale figures', async () => {
  const r = await rig('run');
  r.peers.knobs.mode = { resources: 'hang', networkStats: 'hang' };
  r.host.mode = 'hang';
  await r.clock.advance(3 * INTERVAL + FIG_DEADLINE);
  const late = keepalives(r).slice(1).map((at, i) => at - (T0 + (i + 1) * INTERVAL));
  assert.deepEqual(late, [FIG_DEADLINE, FIG_DEADLINE, FIG_DEADLINE]);
  assert.ok(FIG_DEADLINE < INTERVAL);
  assert.equal(r.server.dump(k.root)[k.keepalive], String(Math.floor((T0 + 3 * INTERVAL + FIG_DEADLINE) / 1000)));
  assert.equal(r.server.dump(k.root)[k.runningDomains], 'u1 u2 u3', 'last known figures');
  assert.equal(r.loop.missed, 0);
  await r.stop();
});

test('vmd stops answering: one slow keepalive still carries its last figures; from the 2nd its keys are left out (ZK keeps them); back → written again', async () => {
  const r = await rig('run');
  const vmdKeys = [k.memAlloc, k.memProv, k.vcpuAlloc, k.domainsCount, k.runningDomains];
  const last = (): Record<string, string> => {
    const w = r.spy.writes.filter((x) => x.paths.includes(k.keepalive)).at(-1);
    return (w?.data ?? {}) as Record<string, string>;
  };
  const before = r.server.dump(k.root);
  r.peers.knobs.mode = { resources: 'hang' };
  await r.clock.advance(INTERVAL + FIG_DEADLINE);
  for (const key of vmdKeys) assert.equal(last()[key], before[key], `one slow answer: ${key} still written (stale)`);
  r.peers.resourcesValue = { runningDomains: ['n1'], memAllocMib: 1024, memProvMib: 1024, vcpuAlloc: 1 };
  await r.clock.advance(2 * INTERVAL);
  assert.equal(keepalives(r).length, 4);
  for (const key of vmdKeys) assert.equal(last()[key], undefined, `down: ${key} left out`);
  assert.ok(last()[k.networkStats] !== undefined && last()[k.memFree] !== undefined, 'the other keys are still written');
  const dump = r.server.dump(k.root);
  for (const key of vmdKeys) assert.equal(dump[key], before[key], `${key} untouched in ZK`);
  assert.equal(r.log.messages(/vmd is down/).length, 1);
  assert.deepEqual(r.log.lines.filter((l) => l.msg === 'keepalive').at(-1)?.['down'], ['vmd']);

  r.peers.knobs.mode = {};
  await r.clock.advance(INTERVAL);
  assert.equal(last()[k.runningDomains], 'n1', 'first answer: written again');
  assert.equal(r.server.dump(k.root)[k.memAlloc], '1024');
  assert.equal(r.log.messages(/vmd answers again/).length, 1);
  await r.stop();
});

test('netd down: only network_stats is left out', async () => {
  const r = await rig('run');
  r.peers.knobs.mode = { networkStats: 'fail' };
  await r.clock.advance(2 * INTERVAL);
  const w = r.spy.writes.filter((x) => x.paths.includes(k.keepalive)).at(-1);
  assert.ok(w && !w.paths.includes(k.networkStats));
  assert.ok(w.paths.includes(k.runningDomains) && w.paths.includes(k.memAlloc));
  await r.stop();
});

test('a peer that ignores its deadline does not delay the keepalive', async () => {
  const r = await rig('run');
  r.peers.knobs = { mode: { resources: 'hang' }, ignoreDeadline: true };
  // Each keepalive waits at most the figures deadline for the hung peer, then is written.
  await r.clock.advance(2 * INTERVAL + FIG_DEADLINE);
  assert.equal(keepalives(r).length, 3);
  await r.stop();
});

test('the keepalive log line carries the cluster details and the stale peers', async () => {
  const r = await rig('run');
  r.peers.knobs.mode = { resources: 'fail' };
  await r.clock.advance(INTERVAL);
  const lines = r.log.lines.filter((l) => l.msg === 'keepalive');
  assert.equal(lines.length, 2);
  assert.equal(lines[0]?.['domains'], 3);
  assert.equal(lines[0]?.['stale'], undefined);
  assert.deepEqual(lines[1]?.['stale'], ['vmd']);
  await r.stop();
});

test('the first keepalive leaves shutdown alone even when the daemonstate watch answers after the figures', async () => {
  const clock = new VirtualClock(T0);
  const server = new FakeZkServer({ clock });
  const raw = await server.connect();
  await seedBase(raw);
  await seedNode(raw, T0, { name: 'hv1', daemonState: 'shutdown' });
  // A slow ZK read: the watch's first delivery comes 50 ms after it was asked for.
  const slow = new Proxy(raw, {
    get(target, prop) {
      if (prop === 'watchData') {
        return (path: string, fn: Parameters<ZkClient['watchData']>[1]) =>
          target.watchData(path, async (v) => {
            await clock.sleep(50);
            await fn(v);
          });
      }
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  const log = memoryLogger();
  const loop = new KeepaliveLoop({
    node: 'hv1', zk: slow, clock, logger: log.logger, events: () => undefined,
    figures: new FigureGatherer({ peers: new FakePeers(clock), host: new FakeHostStats(), logger: log.logger, clock }),
    settings: { intervalMs: INTERVAL, figuresDeadlineMs: FIG_DEADLINE, logKeepalives: false, logClusterDetails: false },
  });
  const ac = new AbortController();
  const running = loop.run(ac.signal);
  await clock.advance(INTERVAL);
  ac.abort();
  await settle(clock, running.catch(() => undefined));
  assert.equal(server.dump(k.root)[k.daemonState], 'shutdown');
});
