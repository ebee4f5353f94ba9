import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '@pvc/runtime';
import { paths, type ZkClient } from '@pvc/zk';
import { FakeZkServer } from '@pvc/zk/testing';
import { LivenessTracker } from './liveness.js';
import { memoryLogger } from '../testing/fakes.js';
import { seedBase, seedNode } from '../testing/cluster.js';

// The blind-spell rule (blind-spell.ts) as the tracker applies it: hv1 is a peer, hv2 the node
// that may die, hv3 this observer's own node. Every node beats on whole seconds.
const T0 = 1_700_000_000_000;
const INTERVAL = 1_000;

interface Rig { clock: VirtualClock; server: FakeZkServer; zk: ZkClient; writer: ZkClient; t: LivenessTracker; log: ReturnType<typeof memoryLogger> }

async function rig(): Promise<Rig> {
  const clock = new VirtualClock(T0);
  const server = new FakeZkServer({ clock });
  const writer = await server.connect({ sessionTimeoutMs: 60_000 });
  await seedBase(writer);
  for (const name of ['hv1', 'hv2', 'hv3']) await seedNode(writer, T0, { name });
  const zk = await server.connect({ sessionTimeoutMs: 10_000 });
  const log = memoryLogger();
  const t = new LivenessTracker({ zk, clock, logger: log.logger, self: 'hv3', intervalMs: INTERVAL });
  t.start();
  await clock.advance(0);
  return { clock, server, zk, writer, t, log };
}

/** Runs the clock to `untilS` seconds after T0, the `beating` nodes writing a keepalive on every whole second. */
async function runTo(r: Rig, untilS: number, beating: readonly string[]): Promise<void> {
  const until = T0 + untilS * 1_000;
  for (let s = Math.floor((r.clock.now() - T0) / 1_000) + 1; T0 + s * 1_000 <= until; s++) {
    await r.clock.advance(T0 + s * 1_000 - r.clock.now());
    for (const n of beating) await r.writer.write([[paths.node(n).keepalive, String(Math.floor(r.clock.now() / 1_000))]]);
  }
  await r.clock.advance(until - r.clock.now());
}

const ALL = ['hv1', 'hv2', 'hv3'];

/** This observer's connection comes back (the session kept), and what it re-reads is delivered. */
async function reconnect(r: Rig): Promise<void> {
  r.server.reconnect(r.zk);
  await r.clock.advance(0);
}

/** All beat to 5 s; hv2 dies there; we are blind from 5.5 s. */
async function blindFrom5(r: Rig): Promise<void> {
  await runTo(r, 5.5, ALL);
  r.server.disconnect(r.zk);
}

test('no peer advanced while we were blind: every window restarts, as before', async () => {
  const r = await rig();
  await blindFrom5(r);
  await runTo(r, 9.5, []);
  await reconnect(r);
  assert.equal(r.t.silentForMs('hv2'), 0);
  assert.equal(r.t.silentForMs('hv1'), 0);
  await runTo(r, 12.5, ['hv1', 'hv3']);
  assert.equal(r.t.silentForMs('hv2'), 3_000, 'the beats after our reconnection are normal sightings, not evidence');
  r.t.stop();
});

test('a peer kept beating while we were blind: the silent node keeps the vouched part of its silence', async () => {
  const r = await rig();
  await blindFrom5(r);
  await runTo(r, 8.5, ['hv1', 'hv3']);
  await reconnect(r);
  // hv1: 3 beats (6, 7, 8 s) since the version that appeared at 5 s → 2 intervals vouched.
  assert.equal(r.t.silentForMs('hv2'), 2_000);
  assert.equal(r.t.silentForMs('hv1'), 0, 'the voucher is alive');
  assert.equal(r.t.silentForMs('hv3'), 0, 'our own node is never kept silent');
  assert.equal(r.t.silentUnvouchedForMs('hv2'), 0, 'the failed-fence reset wait still restarts at our reconnection');
  assert.ok(r.log.lines.some((l) => l.msg.startsWith('silence kept across our blind spell') && l['node'] === 'hv2' && l['voucher'] === 'hv1'));
  await runTo(r, 9.5, ['hv1', 'hv3']);
  assert.equal(r.t.silentForMs('hv2'), 3_000, 'one window (3 intervals) from its last beat + 1 interval, not from our reconnection');
  r.t.stop();
});

test('only our own node advanced: no evidence (its beats cannot vouch for anything)', async () => {
  const r = await rig();
  await blindFrom5(r);
  await runTo(r, 8.5, ['hv3']);
  await reconnect(r);
  assert.equal(r.t.silentForMs('hv2'), 0);
  assert.equal(r.t.silentForMs('hv1'), 0);
  r.t.stop();
});

test('a node that wrote during our blind spell is alive, whatever the peers vouch for', async () => {
  const r = await rig();
  await blindFrom5(r);
  await runTo(r, 7.5, ['hv1', 'hv2', 'hv3']);
  await runTo(r, 8.5, ['hv1', 'hv3']);
  await reconnect(r);
  assert.equal(r.t.silentForMs('hv2'), 0);
  r.t.stop();
});

test('a peer that missed a tick vouches for nothing (e.g. an outage between its beats)', async () => {
  const r = await rig();
  await blindFrom5(r);
  await runTo(r, 6.5, ['hv1', 'hv3']);
  await runTo(r, 11.5, []);
  await runTo(r, 13.5, ['hv1', 'hv3']);
  await reconnect(r);
  assert.equal(r.t.silentForMs('hv2'), 0);
  r.t.stop();
});

test('a global outage: nobody writes until it ends, one beat before our reconnection proves nothing', async () => {
  const r = await rig();
  await runTo(r, 5.5, ALL);
  r.server.stop();
  await runTo(r, 12, []);
  r.server.start();
  r.server.disconnect(r.zk); // we come back a little after the others
  await runTo(r, 13.5, ['hv1', 'hv3']);
  await reconnect(r);
  assert.equal(r.zk.state, 'connected');
  assert.equal(r.t.silentForMs('hv2'), 0);
  await runTo(r, 16.5, ['hv1', 'hv3']);
  assert.equal(r.t.silentForMs('hv2'), 3_000);
  r.t.stop();
});

test('our session expired while blind: the new session re-reads everything and the rule applies the same', async () => {
  const r = await rig();
  await blindFrom5(r);
  await runTo(r, 8.5, ['hv1', 'hv3']);
  const session = r.zk.sessionId;
  r.server.expireSession(r.zk);
  await reconnect(r);
  assert.equal(r.zk.state, 'connected');
  assert.notEqual(r.zk.sessionId, session, 'a new session');
  assert.equal(r.t.silentForMs('hv2'), 2_000, 'hv2\'s re-read shows its old version: still silent');
  r.t.stop();
});

test('flaps: each reconnection restarts the windows; a peer vouches only from a version seen live', async () => {
  const r = await rig();
  await blindFrom5(r);
  await runTo(r, 6.5, ['hv1', 'hv3']);
  await reconnect(r);
  assert.equal(r.t.silentForMs('hv2'), 0, 'hv1: 1 beat, no evidence');
  await runTo(r, 7.2, []);
  r.server.disconnect(r.zk);
  await runTo(r, 9.5, ['hv1', 'hv3']);
  await reconnect(r);
  // hv1 missed the 7 s tick; its 6 s version, first seen at our reconnection at 6.5 s, cannot show it.
  assert.equal(r.t.silentForMs('hv2'), 0, 'no anchor seen live: no evidence');
  await runTo(r, 10.5, ['hv1', 'hv3']);
  r.server.disconnect(r.zk);
  await runTo(r, 12.5, ['hv1', 'hv3']);
  await reconnect(r);
  assert.equal(r.t.silentForMs('hv2'), 1_000, 'hv1: 2 beats (11, 12 s) since its 10 s version, seen live, vouch 1 interval');
  await runTo(r, 13, ['hv1', 'hv3']);
  r.server.disconnect(r.zk);
  await runTo(r, 13.5, []);
  await reconnect(r);
  assert.equal(r.t.silentForMs('hv2'), 0, 'a later spell without evidence restarts it again');
  r.t.stop();
});

test('a node that appeared while we were blind gets a full window from its first sighting', async () => {
  const r = await rig();
  await blindFrom5(r);
  await runTo(r, 6.5, ['hv1', 'hv3']);
  await seedNode(r.writer, T0, { name: 'hv4' });
  await runTo(r, 8.5, ['hv1', 'hv3']);
  await reconnect(r);
  assert.equal(r.t.silentForMs('hv4'), 0);
  assert.equal(r.t.silentForMs('hv2'), 2_000);
  r.t.stop();
});
