import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { paths } from '@pvc/zk';
import { VmdError } from './errors.js';
import { DEFAULT_START_CONCURRENCY } from './start-jobs.js';
import { unitRig } from './testing.js';

/** VM `i`'s UUID. */
const uuid = (i: number): string => `5a000000-0000-0000-0000-${String(i).padStart(12, '0')}`;
const range = (a: number, b?: number): number[] => (b === undefined ? [...Array(a).keys()] : [...Array(b - a).keys()].map((i) => a + i));

type Rig = Awaited<ReturnType<typeof unitRig>>;

/** `n` VMs of a dead node (hv2) in `start`, and a vmd on hv1 that has settled. */
async function recoveryRig(n: number, opts: { createLatencyMs: number; startConcurrency?: number }) {
  const rig = await unitRig(opts);
  for (const i of range(n)) await rig.define(uuid(i), `vm${i}`, 'start', 'hv2');
  const vmd = await rig.startVmd();
  await rig.settle();
  assert.equal(rig.hv.creates.size, 0, 'nothing of hv2\'s is started on hv1');
  return { rig, vmd };
}

/**
 * What keepaliled's recovery does after a fence: one transaction per VM, `gapMs` apart, moving
 * it to hv1 in `start`. Returns the virtual time of the first write.
 */
async function recover(rig: Rig, uuids: readonly string[], gapMs = 5): Promise<number> {
  const t0 = rig.clock.now();
  for (const u of uuids) {
    await rig.admin.write([[paths.domain(u).state, 'start'], [paths.domain(u).node, 'hv1']]);
    await rig.clock.advance(gapMs);
  }
  return t0;
}

/** Advances virtual time in 10 ms steps until `done` holds, at most `boundMs`; then asserts it. */
async function advanceUntil(rig: Rig, what: string, boundMs: number, done: () => boolean): Promise<void> {
  const end = rig.clock.now() + boundMs;
  while (!done() && rig.clock.now() < end) await rig.clock.advance(10);
  assert.ok(done(), `within ${boundMs} ms virtual: ${what}`);
}

/** When each VM came up, ms after `t0`. */
const upAfter = (rig: Rig, t0: number, n: number): number[] => range(n).map((i) => (rig.hv.createdAt.get(uuid(i)) ?? NaN) - t0);

describe('Reconciler starts VMs concurrently, bounded (issue 14 item 6; fake libvirt, virtual time)', () => {
  it('10 VMs written 5 ms apart, 500 ms per createXML: all run within ~600 ms of the first write, each created once', async () => {
    const { rig } = await recoveryRig(10, { createLatencyMs: 500, startConcurrency: 10 });
    const t0 = await recover(rig, range(10).map(uuid));
    await advanceUntil(rig, 'all 10 running', 5000, () => range(10).every((i) => rig.hv.isRunning(uuid(i))));
    const up = upAfter(rig, t0, 10);
    assert.ok(Math.max(...up) <= 600, `last one up ${Math.max(...up)} ms after the first write (serial would be 5000): ${up.join(' ')}`);
    assert.equal(rig.hv.peakCreatesInFlight, 10);
    await rig.settle(6000);
    assert.deepEqual(range(10).map((i) => rig.hv.creates.get(uuid(i))), range(10).map(() => 1), 'never created twice');
    for (const i of range(10)) assert.equal(await rig.admin.read(paths.domain(uuid(i)).state), 'start');
    await rig.stop();
  });

  it('a VM arriving while another is being created is started at once, not after it', async () => {
    const { rig } = await recoveryRig(2, { createLatencyMs: 500 });
    const t0 = await recover(rig, [uuid(0)]);
    await rig.clock.advance(195); // vm0's createXML is under way
    await recover(rig, [uuid(1)]);
    await advanceUntil(rig, 'both running', 3000, () => rig.hv.isRunning(uuid(0)) && rig.hv.isRunning(uuid(1)));
    const [a = NaN, b = NaN] = upAfter(rig, t0, 2);
    assert.ok(a <= 520 && b <= 720, `vm0 up after ${a} ms, vm1 (written at 200 ms) after ${b} ms; a pass waiting for vm0 would give ≥ 1000`);
    await rig.stop();
  });

  it(`the bound holds: 12 VMs at the default limit (${DEFAULT_START_CONCURRENCY}) and 10 at limit 3 — at most that many createXML at once, none lost`, async () => {
    for (const [n, limit] of [[12, undefined], [10, 3]] as const) {
      const { rig, vmd } = await recoveryRig(n, { createLatencyMs: 500, startConcurrency: limit });
      const bound = limit ?? DEFAULT_START_CONCURRENCY;
      const t0 = await recover(rig, range(n).map(uuid));
      // Starts beyond the bound wait in the queue and take a slot as soon as one frees.
      const rounds = Math.ceil(n / bound);
      await advanceUntil(rig, `all ${n} running`, 10_000, () => range(n).every((i) => rig.hv.isRunning(uuid(i))));
      const last = Math.max(...upAfter(rig, t0, n));
      assert.ok(last <= rounds * 500 + 150, `limit ${bound}: last up after ${last} ms (${rounds} rounds of 500 ms)`);
      assert.equal(rig.hv.peakCreatesInFlight, bound, `limit ${bound}`);
      assert.equal(vmd.starts.peak, bound);
      await rig.settle(6000);
      assert.deepEqual(range(n).map((i) => rig.hv.creates.get(uuid(i))), range(n).map(() => 1));
      await rig.stop();
    }
  });

  it('a start slower than the resync period is not started again by the passes meanwhile; a stop written during it wins after', async () => {
    const { rig } = await recoveryRig(1, { createLatencyMs: 4500 });
    await recover(rig, [uuid(0)]);
    await rig.clock.advance(1000);
    await rig.admin.write([[paths.domain(uuid(0)).state, 'stop']]);
    await advanceUntil(rig, 'created, then destroyed', 10_000, () => rig.hv.destroys.includes(uuid(0)));
    assert.equal(rig.hv.creates.get(uuid(0)), 1);
    assert.equal(rig.hv.isRunning(uuid(0)), false);
    assert.equal(await rig.admin.read(paths.domain(uuid(0)).state), 'stop');
    await rig.stop();
  });

  it('a start failing for a retryable reason is not retried at every other start\'s end, but after its own 1 s delay', async () => {
    const { rig } = await recoveryRig(4, { createLatencyMs: 300 });
    rig.hv.failStart = 1;
    rig.hv.failStartCode = 'LIBVIRT_UNAVAILABLE';
    rig.hv.failStartMessage = 'libvirt connection lost during create: Cannot recv data: Connection reset by peer';
    const t0 = await recover(rig, range(4).map(uuid));
    await advanceUntil(rig, 'the three others running', 3000, () => range(1, 4).every((i) => rig.hv.isRunning(uuid(i))));
    assert.equal(rig.hv.creates.get(uuid(0)), 1, 'vm0 failed (the first create to end) and is not retried by the passes the others\' ends trigger');
    await advanceUntil(rig, 'vm0 running after the start queue retried it', 6000, () => rig.hv.isRunning(uuid(0)));
    const retried = (rig.hv.createdAt.get(uuid(0)) ?? NaN) - t0;
    // Failed ~300 ms after the writes, retried 1 s later, up 300 ms after that.
    assert.ok(retried >= 1500 && retried <= 1800, `vm0 up ${retried} ms after the writes`);
    assert.equal(rig.hv.creates.get(uuid(0)), 2);
    assert.equal(await rig.admin.read(paths.domain(uuid(0)).state), 'start', 'a retryable failure does not fail the VM');
    await rig.stop();
  });

  it('a start refused by libvirt during a burst fails that VM only; the others run', async () => {
    const { rig } = await recoveryRig(4, { createLatencyMs: 300 });
    rig.hv.failStart = 1;
    await recover(rig, range(4).map(uuid));
    await advanceUntil(rig, 'one failed, three running', 3000, () => range(4).filter((i) => rig.hv.isRunning(uuid(i))).length === 3);
    const states = await Promise.all(range(4).map(async (i) => rig.admin.read(paths.domain(uuid(i)).state)));
    assert.deepEqual(states.filter((s) => s === 'fail').length, 1);
    await rig.stop();
  });
});

describe('Reconciler start retries (issue 17 item 2: the start queue; fake libvirt, virtual time)', () => {
  /** Records when each createXML of `u` began. */
  function tries(rig: Rig, u: string): number[] {
    const at: number[] = [];
    const create = rig.hv.createTransient.bind(rig.hv);
    rig.hv.createTransient = (xml: string) => {
      if (xml.includes(u)) at.push(rig.clock.now());
      return create(xml);
    };
    return at;
  }
  const unavailable = (rig: Rig, n: number): void => {
    rig.hv.failStart = n;
    rig.hv.failStartCode = 'LIBVIRT_UNAVAILABLE';
    rig.hv.failStartMessage = 'libvirt connection lost during create: Cannot recv data: Connection reset by peer';
  };

  it('a VM whose start keeps throwing is retried after 1, 2, 4, 8, 16 s, busy for the plan all along, logged once; it starts once the cause is gone', async () => {
    const { rig, vmd } = await recoveryRig(1, { createLatencyMs: 300 });
    const u = uuid(0);
    const at = tries(rig, u);
    unavailable(rig, 5);
    const passes0 = vmd.passes;
    let planned = 0;
    vmd.onPass = (r) => void (planned += r.actions.filter((a) => a.kind === 'start' && a.uuid === u).length);
    await recover(rig, [u]);
    await advanceUntil(rig, 'vm0 running', 40_000, () => {
      if (!rig.hv.isRunning(u)) assert.ok(vmd.starts.busy.has(u), 'queued, running or in backoff: busy');
      return rig.hv.isRunning(u);
    });
    assert.equal(planned, 1, 'planned once: a VM in start backoff is busy for the plan');
    const gaps = at.slice(1).map((t, i) => t - (at[i] ?? 0) - 300);
    assert.deepEqual(gaps, [1000, 2000, 4000, 8000, 16_000], `tries at ${at.map((t) => t - (at[0] ?? 0)).join(' ')}`);
    assert.ok(vmd.passes - passes0 > 15, `${vmd.passes - passes0} passes meanwhile, none of them started it`);
    const failing = rig.lines.filter((l) => /^vm-start: failed; retrying/.test(String(l.msg)));
    assert.deepEqual(failing.map((l) => [l.vm, l.uuid, l.err]), [['vm0', u, rig.hv.failStartMessage]], 'logged once, not at every try or pass');
    assert.equal(rig.lines.filter((l) => l.msg === 'VM action failed').length, 0);
    assert.deepEqual(rig.lines.filter((l) => l.msg === 'vm-start: works again').map((l) => [l.vm, l.failures]), [['vm0', 5]]);
    await rig.settle(6000);
    assert.equal(rig.hv.creates.get(u), 6, '5 failed tries, 1 start; never created twice');
    assert.equal(await rig.admin.read(paths.domain(u).state), 'start');
    await rig.stop();
  });

  it('a createXML whose answer was lost is not sent again: the retry finds the domain running', async () => {
    const { rig, vmd } = await recoveryRig(1, { createLatencyMs: 300 });
    const u = uuid(0);
    const create = rig.hv.createTransient.bind(rig.hv);
    let lose = 1;
    rig.hv.createTransient = async (xml: string) => {
      await create(xml);
      if (lose-- > 0) throw new VmdError('LIBVIRT_UNAVAILABLE', 'libvirt connection lost during create', { retryable: true });
    };
    await recover(rig, [u]);
    await rig.settle(5000);
    assert.equal(rig.hv.creates.get(u), 1, 'created once');
    assert.equal(rig.hv.isRunning(u), true);
    assert.equal(await rig.admin.read(paths.domain(u).state), 'start', 'not failed by a second createXML');
    assert.ok(rig.lines.some((l) => l.msg === 'the VM runs here after a start try that failed: not created again' && l.vm === 'vm0'));
    assert.deepEqual([...vmd.starts.busy], []);
    await rig.stop();
  });

  it('a VM in start backoff whose state changes loses its failure history: a later `pvc vm start` is tried at once', async () => {
    const { rig, vmd } = await recoveryRig(1, { createLatencyMs: 300 });
    const u = uuid(0);
    const at = tries(rig, u);
    unavailable(rig, 100);
    await recover(rig, [u]);
    await advanceUntil(rig, 'five failed tries (next one 16 s away)', 20_000, () => at.length === 5 && vmd.starts.inBackoff().includes(u));
    await rig.clock.advance(500);
    await rig.admin.write([[paths.domain(u).state, 'stop']]);
    await advanceUntil(rig, 'no longer busy', 1000, () => !vmd.starts.busy.has(u));
    assert.equal(vmd.starts.failures(u), 0);
    assert.equal(at.length, 5, 'forgetting ran its job, which found the start no longer wanted');
    assert.ok(rig.lines.some((l) => l.msg === 'start no longer wanted: its retry history is forgotten' && l.state === 'stop'));
    rig.hv.failStart = 0;
    const t1 = rig.clock.now();
    await rig.admin.write([[paths.domain(u).state, 'start']]);
    await advanceUntil(rig, 'running', 2000, () => rig.hv.isRunning(u));
    assert.ok((at[5] ?? NaN) - t1 <= 100, `tried ${(at[5] ?? NaN) - t1} ms after the new start, not after the 16 s backoff`);
    assert.equal(rig.hv.creates.get(u), 6);
    await rig.stop();
  });

  it('a retry waiting while the node turns fence-flush does not start the VM (the job re-checks the start guard); ready starts it', async () => {
    const { rig, vmd } = await recoveryRig(1, { createLatencyMs: 300 });
    const u = uuid(0);
    const at = tries(rig, u);
    unavailable(rig, 2);
    await recover(rig, [u]);
    await advanceUntil(rig, 'two failed tries', 5000, () => at.length === 2 && vmd.starts.inBackoff().includes(u));
    await rig.admin.write([[paths.node('hv1').domainState, 'fence-flush']]);
    await rig.settle(6000);
    assert.equal(at.length, 2, 'the retry found starts blocked and did not create it');
    assert.ok(rig.lines.some((l) => l.msg === 'start not attempted: starts are blocked here now' && l.vm === 'vm0'));
    assert.deepEqual([...vmd.starts.busy], []);
    await rig.admin.write([[paths.node('hv1').domainState, 'ready']]);
    await advanceUntil(rig, 'running once ready', 2000, () => rig.hv.isRunning(u));
    assert.equal(rig.hv.creates.get(u), 3);
    await rig.stop();
  });
});
