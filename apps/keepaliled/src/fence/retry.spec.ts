import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '@pvc/runtime';
import { createLock, locks, paths, type ZkClient } from '@pvc/zk';
import { FakeZkServer } from '@pvc/zk/testing';
import type { KeepalivedEvent } from '../model.js';
import { FakePeers, memoryLogger, settle } from '../testing/fakes.js';
import { domainKeys, interceptZk, seedBase, seedDomain, seedNode, type SeedNode } from '../testing/cluster.js';
import { LivenessTracker } from './liveness.js';
import { RecoveryRetry, type RecoveryRetryDeps } from './retry.js';
import { noTargetReason } from './rules.js';

const T0 = 1_700_000_000_000;
const INTERVAL = 5_000;

interface Rig {
  clock: VirtualClock;
  raw: ZkClient;
  spy: ReturnType<typeof interceptZk>;
  events: KeepalivedEvent[];
  log: ReturnType<typeof memoryLogger>;
  liveness: LivenessTracker;
  primary: { on: boolean };
  retry: RecoveryRetry;
  server: FakeZkServer;
}

interface RigOptions {
  /** hv2's domain state (default `flushed`: no target) and free memory. */
  hv2?: Partial<SeedNode>;
  /** hv3, the dead node: default fenced + flushed. */
  hv3?: Partial<SeedNode>;
  rules?: RecoveryRetryDeps['rules'];
  maintenance?: boolean;
}

/** hv1 (primary, full), hv2 (flushed by default), hv3 dead with two VMs recovery could not place. */
async function rig(o: RigOptions = {}): Promise<Rig> {
  const clock = new VirtualClock(T0);
  const server = new FakeZkServer({ clock });
  const raw = await server.connect();
  await seedBase(raw, { selector: 'mem', primary: 'hv1', maintenance: o.maintenance ?? false });
  await seedNode(raw, T0, { name: 'hv1', mode: 'coordinator', routerState: 'primary', memFreeMiB: 500 });
  await seedNode(raw, T0, { name: 'hv2', mode: 'coordinator', domainState: 'flushed', memFreeMiB: 8_000, ...o.hv2 });
  await seedNode(raw, T0, { name: 'hv3', daemonState: 'fenced', domainState: 'flushed', memFreeMiB: 0, ...o.hv3 });
  for (const uuid of ['a', 'b']) {
    await seedDomain(raw, { uuid, name: `vm-${uuid}`, node: 'hv3', state: 'stop', memoryMiB: 2_048 });
    await raw.write([[paths.domain(uuid).nodeAutostart, 'True'], [paths.domain(uuid).failedReason, noTargetReason('hv3', 'hv2: domain state flushed')]]);
  }
  const zk = await server.connect();
  const spy = interceptZk(zk, clock);
  const log = memoryLogger();
  const events: KeepalivedEvent[] = [];
  const liveness = new LivenessTracker({ zk: spy.zk, clock, logger: log.logger, self: 'hv1', intervalMs: INTERVAL });
  liveness.start();
  const primary = { on: true };
  const retry = new RecoveryRetry({
    self: 'hv1', zk: spy.zk, clock, logger: log.logger, events: (e) => events.push(e), peers: new FakePeers(clock), storageEnabled: false,
    defaultSelector: 'mem', liveness, isPrimary: () => primary.on, intervalMs: INTERVAL,
    rules: o.rules ?? { failedFence: 'none', resetWaitMs: undefined },
  });
  await clock.advance(10); // the watches deliver
  return { clock, raw, spy, events, log, liveness, primary, retry, server };
}

const pass = async (r: Rig): Promise<Awaited<ReturnType<RecoveryRetry['pass']>>> => (await settle(r.clock, r.retry.pass(new AbortController().signal))).value;
const vmWrites = (r: Rig): string[][] => r.spy.writes.filter((w) => w.paths.some((p) => p.startsWith('/domains/'))).map((w) => w.paths);

test('no target yet (hv2 flushed): the VMs are left, nothing is written', async () => {
  const r = await rig();
  const report = await pass(r);
  assert.deepEqual(report, { outcome: 'done', moved: [], left: ['vm-a', 'vm-b'] });
  assert.deepEqual(vmWrites(r), []);
  assert.deepEqual(r.log.messages(/no recovery target yet/), ['VM has no recovery target yet; placement is retried when nodes change and every interval', 'VM has no recovery target yet; placement is retried when nodes change and every interval']);
  await pass(r);
  assert.equal(r.log.messages(/no recovery target yet/).length, 2, 'announced once per VM, not every pass');
});

test('hv2 ready: both VMs move in one guarded transaction each (node, state, autostart, reason and the dead node\'s states checked)', async () => {
  const r = await rig({ hv2: { domainState: 'ready' } });
  const report = await pass(r);
  assert.deepEqual(report, { outcome: 'done', moved: ['vm-a', 'vm-b'], left: [] });
  for (const uuid of ['a', 'b']) {
    assert.deepEqual(await domainKeys(r.raw, uuid), { state: 'start', node: 'hv2', lastnode: 'hv3', autostart: 'False' });
    assert.equal(await r.raw.read(paths.domain(uuid).failedReason), '');
  }
  const d = paths.domain('a');
  const k = paths.node('hv3');
  assert.deepEqual(vmWrites(r)[0], [d.node, d.state, d.nodeAutostart, d.failedReason, k.daemonState, k.domainState, d.state, d.node, d.lastNode, d.nodeAutostart, d.failedReason]);
  assert.deepEqual(r.events, ['vm-a', 'vm-b'].map((vm) => ({ kind: 'vm-recovered', node: 'hv3', vm, target: 'hv2', fencer: 'hv1', retried: true })));
  assert.deepEqual(await pass(r), { outcome: 'done', moved: [], left: [] }, 'idempotent: nothing waits any more');
});

test('room for one: the first moves; the VM it placed counts on hv2 until hv2 runs it, so the next pass does not overfill it', async () => {
  const r = await rig({ hv2: { domainState: 'ready', memFreeMiB: 3_000 } });
  assert.deepEqual(await pass(r), { outcome: 'done', moved: ['vm-a'], left: ['vm-b'] });
  // hv2's keepalive has not caught up (memfree still 3000, vm-a not in runningdomains).
  assert.deepEqual(await pass(r), { outcome: 'done', moved: [], left: ['vm-b'] });
  // It runs vm-a and reports it; 5000 MiB free now (e.g. another VM stopped): vm-b goes too.
  await r.raw.write([[paths.node('hv2').runningDomains, 'a'], [paths.node('hv2').memFree, '5000']]);
  assert.deepEqual(await pass(r), { outcome: 'done', moved: ['vm-b'], left: [] });
});

test('the dead node checks in between the plan and the write: nothing is written', async () => {
  const r = await rig({ hv2: { domainState: 'ready' } });
  r.spy.hold.fn = async (w) => {
    if (w.kind === 'multi') await r.raw.write([[paths.node('hv3').daemonState, 'init']]);
  };
  assert.deepEqual(await pass(r), { outcome: 'done', moved: [], left: [] });
  assert.equal(r.spy.writes.filter((w) => w.outcome === 'ok').length, 0);
  assert.deepEqual(await domainKeys(r.raw, 'a'), { state: 'stop', node: 'hv3', lastnode: '', autostart: 'True' });
  assert.deepEqual(r.events, []);
});

test('the VM is started on its node (readied) between the plan and the write: nothing is written', async () => {
  const r = await rig({ hv2: { domainState: 'ready' } });
  r.spy.hold.fn = async (w) => {
    if (w.paths[0] === paths.domain('a').node) await r.raw.write([[paths.domain('a').state, 'start'], [paths.domain('a').nodeAutostart, 'False']]);
  };
  assert.deepEqual(await pass(r), { outcome: 'done', moved: ['vm-b'], left: [] });
  assert.deepEqual(await domainKeys(r.raw, 'a'), { state: 'start', node: 'hv3', lastnode: '', autostart: 'False' });
});

test('the re-check sees a changed fact: the move is not even tried', async () => {
  const r = await rig({ hv2: { domainState: 'ready' } });
  await r.raw.write([[paths.domain('a').failedReason, 'stopped by the operator']]);
  assert.deepEqual(await pass(r), { outcome: 'done', moved: ['vm-b'], left: [] });
  assert.equal((await domainKeys(r.raw, 'a')).node, 'hv3');
});

test('only recoverable nodes: back (run), fence-flush, or dead after a failed fence with failed_fence none — nothing is read or written', async () => {
  for (const hv3 of [{ daemonState: 'run' }, { daemonState: 'fenced', domainState: 'fence-flush' }, { daemonState: 'dead' }]) {
    const r = await rig({ hv2: { domainState: 'ready' }, hv3 });
    assert.deepEqual(await pass(r), { outcome: 'idle', moved: [], left: [] }, JSON.stringify(hv3));
    assert.equal((await domainKeys(r.raw, 'a')).node, 'hv3');
  }
});

test('dead after a failed fence with failed_fence migrate: only once silent for the reset wait (as observed here)', async () => {
  const r = await rig({ hv2: { domainState: 'ready' }, hv3: { daemonState: 'dead' }, rules: { failedFence: 'migrate', resetWaitMs: 20_000 } });
  assert.equal((await pass(r)).outcome, 'idle');
  await r.clock.advance(20_000);
  assert.deepEqual(await pass(r), { outcome: 'done', moved: ['vm-a', 'vm-b'], left: [] });
});

test('not primary, maintenance, or the fence lock held: nothing', async () => {
  const r = await rig({ hv2: { domainState: 'ready' } });
  r.primary.on = false;
  assert.equal((await pass(r)).outcome, 'not-primary');
  r.primary.on = true;
  await r.raw.write([[paths.config.maintenance, 'on']]);
  assert.equal((await pass(r)).outcome, 'maintenance');
  await r.raw.write([[paths.config.maintenance, 'false']]);
  const other = await r.server.connect();
  const theirs = createLock(other, locks.fence, { clock: r.clock, identifier: 'hv2' });
  assert.equal(await theirs.acquire({ timeoutMs: 1_000 }), true);
  assert.equal((await pass(r)).outcome, 'busy');
  assert.deepEqual(vmWrites(r), []);
  await theirs.release();
  assert.deepEqual((await pass(r)).moved, ['vm-a', 'vm-b']);
});

test('primary lost mid-pass: no further move', async () => {
  const r = await rig({ hv2: { domainState: 'ready' } });
  r.spy.hold.fn = async () => void (r.primary.on = false);
  assert.deepEqual((await pass(r)).moved, ['vm-a']);
  assert.equal((await domainKeys(r.raw, 'b')).node, 'hv3');
});

test('the loop: a node state change triggers a pass at once; freed memory is seen within one interval', async () => {
  const r = await rig({ hv2: { memFreeMiB: 3_000 } });
  const ac = new AbortController();
  const running = r.retry.run(ac.signal);
  await r.clock.advance(INTERVAL * 3);
  const recovered = (): (string | false)[] => r.events.map((e) => e.kind === 'vm-recovered' && e.vm);
  assert.deepEqual(recovered(), []);
  await r.raw.write([[paths.node('hv2').domainState, 'ready']]);
  await r.clock.advance(500);
  assert.deepEqual(recovered(), [], 'not within the minimum gap of 1 s after the last pass');
  await r.clock.advance(600); // the state change, after the minimum gap of 1 s
  assert.deepEqual(recovered(), ['vm-a']);
  await r.raw.write([[paths.node('hv2').runningDomains, 'a'], [paths.node('hv2').memFree, '5000']]);
  await r.clock.advance(INTERVAL);
  assert.deepEqual(recovered(), ['vm-a', 'vm-b']);
  ac.abort();
  await settle(r.clock, running);
  r.liveness.stop();
});

test('bounded: after one interval under the fence lock no further move starts (RBD lock flushes can be slow); the next pass goes on', async () => {
  const r = await rig({ hv2: { domainState: 'ready' } });
  r.spy.hold.fn = async () => r.clock.sleep(INTERVAL);
  assert.deepEqual(await pass(r), { outcome: 'done', moved: ['vm-a'], left: ['vm-b'] });
  assert.deepEqual(await pass(r), { outcome: 'done', moved: ['vm-b'], left: [] });
});

test('the loop: a failing pass is retried after growing delays (the 1 s gap doubling up to an interval), logged once per reason and once when it works again', async () => {
  const r = await rig({ hv2: { domainState: 'ready' } });
  const t0 = r.clock.now();
  let failWith: string | undefined = 'ZK connection lost';
  const tries: number[] = [];
  Object.defineProperty(r.primary, 'on', {
    get: () => {
      if (failWith === undefined) return true;
      tries.push(r.clock.now() - t0);
      throw new Error(failWith);
    },
  });
  const ac = new AbortController();
  const running = r.retry.run(ac.signal);
  await r.clock.advance(8_000);
  assert.deepEqual(tries, [0, 1_000, 3_000, 7_000]);
  failWith = 'ZK session expired';
  await r.clock.advance(5_000);
  assert.deepEqual(tries, [0, 1_000, 3_000, 7_000, 12_000], 'at most an interval apart');
  failWith = undefined;
  await r.clock.advance(5_000);
  assert.deepEqual(r.events.flatMap((e) => (e.kind === 'vm-recovered' ? [e.vm] : [])), ['vm-a', 'vm-b'], 'placed at 17 s');
  const lines = r.log.lines.filter((l) => l.level >= 30 && /recovery retry/.test(l.msg));
  assert.equal(r.log.lines.filter((l) => /recovery retry: failed again/.test(l.msg)).length, 3, 'repeats at debug');
  assert.deepEqual(lines.map((l) => [l.level, l.msg, l.err, l.failures]), [
    [40, 'recovery retry: failed; retrying with growing delays (logged again when the reason changes)', 'ZK connection lost', 1],
    [40, 'recovery retry: failed; retrying with growing delays (logged again when the reason changes)', 'ZK session expired', 5],
    [30, 'recovery retry: works again', undefined, 5],
  ]);
  ac.abort();
  await settle(r.clock, running);
  r.liveness.stop();
});
