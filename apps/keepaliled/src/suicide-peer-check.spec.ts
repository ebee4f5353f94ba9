/**
 * The suicide watch with the peer check (issue 14 item 5), on the virtual clock: a global
 * Zookeeper outage holds the reset back and says why; an isolated node resets as configured; the
 * end of a global outage while still cut off resets within the bound the fencer allows for.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '@pvc/runtime';
import { validateConfig } from '@pvc/config';
import { mutate } from '@pvc/config/testing';
import { FakeZkServer } from '@pvc/zk/testing';
import type { KeepalivedEvent } from './model.js';
import { SuicideWatch } from './suicide.js';
import { peerAskBoundMs, peerCheckDelayMs } from './fence/rules.js';
import { FakePeers, FakeSelfReset, memoryLogger, settle } from './testing/fakes.js';
import { PeerCheck } from './witness/peer-check.js';
import { localReach } from './witness/local-view.js';
import { cutOffReach, FakeLocalZkServer, FakeWitnessEndpoint, FakeWitnessPeers, healthyReach } from './witness/fakes.js';
import { wireWitness } from './witness/wiring.js';

const INTERVAL = 5_000;
const T0 = 1_700_000_000_000;
const LIMIT = 3 * INTERVAL;
const COORDINATORS = ['hv1', 'hv2', 'hv3'];

function rig(o: { self?: string; coordinators?: string[]; peerCheck?: boolean } = {}) {
  const clock = new VirtualClock(T0);
  const peers = new FakePeers(clock);
  peers.runningVms = ['a', 'b'];
  const reset = new FakeSelfReset(clock);
  const events: KeepalivedEvent[] = [];
  const log = memoryLogger();
  const self = o.self ?? 'hv3';
  const coordinators = o.coordinators ?? COORDINATORS;
  const local = new FakeLocalZkServer();
  local.state = 'not-serving';
  local.detail = 'connection refused (no server listening)';
  const session = { connected: false };
  let lastOk = clock.now();
  const silentForMs = (): number => clock.now() - lastOk;
  const witness = new FakeWitnessPeers(clock);
  const check = new PeerCheck({
    self, coordinators, clock, peers: witness, askBoundMs: peerAskBoundMs(INTERVAL),
    local: (signal) => localReach({ node: self, sessionConnected: () => session.connected, server: local, silentForMs }, signal),
  });
  const watch = new SuicideWatch({
    self, clock, logger: log.logger, events: (e) => events.push(e), peers, reset, silentForMs,
    intervalMs: INTERVAL, suicideIntervals: 3, peerCheck: o.peerCheck === false ? undefined : check,
  });
  const ac = new AbortController();
  const transitions = (): string[] => events.flatMap((e) => (e.kind === 'suicide-watch' ? [`${e.from} -> ${e.to}: ${e.reason}`] : []));
  return {
    clock, peers, reset, events, log, local, session, witness, watch, transitions,
    beat: () => void (lastOk = clock.now()),
    run: () => watch.run(ac.signal),
    stop: () => ac.abort(),
  };
}

type Rig = ReturnType<typeof rig>;

/** Every coordinator but self cut off too: a global outage. */
function globalOutage(r: Rig, others = ['hv1', 'hv2']): void {
  r.witness.set(others, (c) => cutOffReach(c));
}

test('global outage: no reset, one log of why (every coordinator\'s answer), re-asked every interval', async () => {
  const r = rig();
  globalOutage(r);
  const done = r.run();
  await r.clock.advance(LIMIT - 1);
  assert.equal(r.witness.asks.length, 0, 'nobody is asked before the deadline');
  await r.clock.advance(1);
  assert.deepEqual(r.witness.asks.map((a) => [a.coordinator, a.at - T0, a.deadlineMs]), [['hv1', LIMIT, 2_000], ['hv2', LIMIT, 2_000]], 'both asked at once, bounded');
  await r.clock.advance(600_000);
  assert.equal(r.reset.resets.length, 0);
  assert.equal(r.peers.callsOf('stopAllVms').length, 0, 'the VMs keep running');
  assert.deepEqual(r.transitions(), [
    'watching -> held: global Zookeeper outage, not resetting: 3 of 3 coordinators cannot reach Zookeeper (2 needed): '
      + 'hv1 cut off (connection refused (no server listening)), hv2 cut off (connection refused (no server listening)), '
      + 'hv3 (self) cut off (connection refused (no server listening))',
  ]);
  const hv1Asks = r.witness.asks.filter((a) => a.coordinator === 'hv1').map((a) => a.at - T0);
  assert.equal(hv1Asks.length, 1 + 600_000 / INTERVAL);
  assert.ok(hv1Asks.every((at, i) => i === 0 || at - (hv1Asks[i - 1] ?? 0) === INTERVAL), 'one ask per interval');
  assert.equal(r.watch.state, 'held');
  r.stop();
  await settle(r.clock, done);
});

test('a node that is not a coordinator counts only the coordinators\' answers', async () => {
  const r = rig({ self: 'hv4' });
  globalOutage(r, COORDINATORS);
  const done = r.run();
  await r.clock.advance(LIMIT + 60_000);
  assert.equal(r.reset.resets.length, 0);
  assert.equal(r.local.probes, 0, 'hv4 runs no ZK server: not probed');
  assert.match(r.transitions()[0] ?? '', /^watching -> held: .*3 of 3 coordinators cannot reach Zookeeper \(2 needed\)/);
  r.stop();
  await settle(r.clock, done);
});

test('isolated (no coordinator answers): resets at the deadline plus the ask bound, saying why', async () => {
  const r = rig();
  await settle(r.clock, r.run(), { limitMs: 60_000 });
  assert.deepEqual(r.reset.resets, [{ at: T0 + LIMIT + 2_000, reason: 'no keepalive for 17 s' }]);
  assert.deepEqual(r.peers.callsOf('stopAllVms').map((c) => c.at - T0), [LIMIT + 2_000]);
  assert.deepEqual(r.transitions(), [
    'watching -> fired: cut off and the outage is not global: 1 of 3 coordinators cannot reach Zookeeper (2 needed): '
      + 'hv1 no answer (hv1: DEADLINE_EXCEEDED after 2000 ms), hv2 no answer (hv2: DEADLINE_EXCEEDED after 2000 ms), hv3 (self) cut off (connection refused (no server listening))',
  ]);
  assert.deepEqual(r.events.at(-1), { kind: 'suicide', node: 'hv3', silentMs: LIMIT + 2_000, stopped: 2 });
});

test('coordinators that refuse at once (up, not serving the check) do not confirm: reset right at the deadline', async () => {
  const r = rig();
  r.witness.set(['hv1', 'hv2'], () => 'refuse');
  await settle(r.clock, r.run(), { limitMs: 60_000 });
  assert.equal(r.reset.resets[0]?.at, T0 + LIMIT);
  assert.match(r.transitions()[0] ?? '', /hv1 no answer \(hv1: connection refused\)/);
});

test('a minority confirms: one coordinator reaches ZK, one is silent → not global, reset', async () => {
  const r = rig({ self: 'hv4' });
  r.witness.answers.set('hv1', cutOffReach('hv1'));
  r.witness.answers.set('hv2', healthyReach('hv2'));
  await settle(r.clock, r.run(), { limitMs: 60_000 });
  assert.equal(r.reset.resets.length, 1);
  assert.match(r.transitions()[0] ?? '', /1 of 3 coordinators .*hv1 cut off.*, hv2 reaches Zookeeper, hv3 no answer/);
});

test('what does not confirm: our own session connected, a serving or unknown server, an answer from another node', async () => {
  const cases: [string, (r: Rig) => void, RegExp][] = [
    ['own session up', (r) => void (r.session.connected = true), /hv3 \(self\) reaches Zookeeper/],
    ['hv2 serving', (r) => void r.witness.answers.set('hv2', { ...cutOffReach('hv2'), server: 'serving', serverDetail: 'mode leader' }), /hv2 server serving \(mode leader\)/],
    ['hv2 unknown', (r) => void r.witness.answers.set('hv2', { ...cutOffReach('hv2'), server: 'unknown', serverDetail: 'srvr is not whitelisted' }), /hv2 server unknown/],
    ['hv2 is not hv2', (r) => void r.witness.answers.set('hv2', cutOffReach('hv9')), /hv2 answered as "hv9" \(ignored\)/],
  ];
  for (const [name, arrange, why] of cases) {
    const r = rig();
    r.witness.answers.set('hv1', 'hang');
    globalOutage(r, ['hv2']);
    arrange(r);
    await settle(r.clock, r.run(), { limitMs: 60_000 });
    assert.equal(r.reset.resets.length, 1, name);
    assert.match(r.transitions()[0] ?? '', why, name);
  }
});

test('a peer that ignores its deadline cannot delay the reset: our own bound ends the ask', async () => {
  const r = rig();
  r.witness.ignoreDeadline = true;
  r.witness.latencyMs = 60_000;
  globalOutage(r);
  await settle(r.clock, r.run(), { limitMs: 60_000 });
  assert.equal(r.reset.resets[0]?.at, T0 + LIMIT + 2_000);
});

test('the outage stops being global while we are still cut off: a fresh window, one more ask, then reset — within the bound the fencer allows', async () => {
  const r = rig();
  globalOutage(r);
  const done = r.run();
  await r.clock.advance(41_000);
  assert.equal(r.watch.state, 'held');
  const quorumBack = r.clock.now();
  r.witness.set(['hv1', 'hv2'], (c) => healthyReach(c));
  await settle(r.clock, done, { limitMs: 120_000 });
  const at = r.reset.resets[0]?.at ?? Infinity;
  assert.equal(at - T0, 45_000 + LIMIT, 'noticed at the next re-ask (45 s), reset after a fresh window');
  assert.ok(at - quorumBack <= peerCheckDelayMs(INTERVAL, 3), `reset ${at - quorumBack} ms after quorum came back`);
  assert.deepEqual(r.transitions().map((t) => t.split(':')[0]), ['watching -> held', 'held -> grace', 'grace -> fired']);
  assert.match(r.transitions()[1] ?? '', /^held -> grace: outage no longer global; resetting unless a keepalive is written within 15 s: 1 of 3 .*hv1 reaches Zookeeper/);
});

test('a keepalive while held, or during the fresh window, ends it: back to watching, no reset; a later outage counts afresh', async () => {
  const r = rig();
  globalOutage(r);
  const done = r.run();
  await r.clock.advance(30_000);
  r.beat();
  await r.clock.advance(1_000);
  assert.equal(r.watch.state, 'watching');
  await r.clock.advance(LIMIT - 2_000);
  assert.equal(r.transitions().length, 2, 'no new ask before the new deadline');
  await r.clock.advance(2_000);
  assert.equal(r.watch.state, 'held');
  r.witness.set(['hv1', 'hv2'], (c) => healthyReach(c));
  await r.clock.advance(INTERVAL + 1_000);
  assert.equal(r.watch.state, 'grace');
  r.beat();
  await r.clock.advance(1_000);
  await r.clock.advance(LIMIT - 2_000);
  assert.equal(r.reset.resets.length, 0);
  assert.deepEqual(r.transitions().map((t) => t.split(':')[0]), ['watching -> held', 'held -> watching', 'watching -> held', 'held -> grace', 'grace -> watching']);
  assert.match(r.transitions()[1] ?? '', /a keepalive was written again/);
  r.stop();
  await settle(r.clock, done);
});

test('global again when the fresh window ends: held again, no reset', async () => {
  const r = rig();
  globalOutage(r);
  const done = r.run();
  await r.clock.advance(LIMIT);
  r.witness.set(['hv1', 'hv2'], (c) => healthyReach(c));
  await r.clock.advance(INTERVAL + 1_000);
  assert.equal(r.watch.state, 'grace');
  globalOutage(r);
  await r.clock.advance(60_000);
  assert.equal(r.reset.resets.length, 0);
  assert.deepEqual(r.transitions().map((t) => t.split(':')[0]), ['watching -> held', 'held -> grace', 'grace -> held']);
  r.stop();
  await settle(r.clock, done);
});

test('without the peer check (peer_check_port 0): today\'s behaviour, reset at the deadline and nobody asked', async () => {
  const r = rig({ peerCheck: false });
  globalOutage(r);
  await settle(r.clock, r.run(), { limitMs: 60_000 });
  assert.equal(r.reset.resets[0]?.at, T0 + LIMIT);
  assert.equal(r.witness.asks.length, 0);
  assert.deepEqual(r.transitions(), []);
});

test('wiring: on only with peer_check_port ≠ 0, suicide on and the ports given; the witness server on coordinators only', async () => {
  const clock = new VirtualClock(T0);
  const zk = await new FakeZkServer({ clock }).connect();
  const ports = { peers: new FakeWitnessPeers(clock), endpoint: new FakeWitnessEndpoint(), localServer: new FakeLocalZkServer() };
  const wire = (node: string, ...m: [string, unknown][]) =>
    wireWitness({
      config: validateConfig(mutate(['pvc.node', node], ['pvc.system.fencing.intervals.suicide_intervals', 2], ...m)),
      ports, zk, clock, logger: memoryLogger().logger, silentForMs: () => 0, intervalMs: INTERVAL,
    });
  const on = wire('pvchv1');
  assert.ok(on.check && on.server, 'coordinator: both');
  const hv = wire('pvchv9');
  assert.ok(hv.check && !hv.server, 'hypervisor: asks only');
  assert.deepEqual(wire('pvchv1', ['pvc.system.fencing.peer_check_port', 0]), {});
  assert.deepEqual(wire('pvchv1', ['pvc.system.fencing.intervals.suicide_intervals', 0]), {});
  assert.deepEqual(wireWitness({ config: validateConfig(mutate(['pvc.system.fencing.intervals.suicide_intervals', 2])), ports: undefined, zk, clock, logger: memoryLogger().logger, silentForMs: () => 0, intervalMs: INTERVAL }), {});
  await zk.close();
});
