import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { paths } from '@pvc/zk';
import { captureLogger } from '../testing.js';
import { flushRig, NODES, type NodeName } from './rig.js';

type Rig = Awaited<ReturnType<typeof flushRig>>;

/** Advances in 100 ms steps until `done` (or `maxMs`), checking the invariants at every step; returns the virtual ms taken. */
async function stepUntil(r: Rig, done: () => Promise<boolean>, maxMs: number, check: (r: Rig) => Promise<void>): Promise<number> {
  const t0 = r.clock.now();
  while (r.clock.now() - t0 < maxMs) {
    await r.clock.advance(100);
    await check(r);
    if (await done()) return r.clock.now() - t0;
  }
  throw new Error(`not done within ${maxMs} ms`);
}

const FLUSH_REASON = 'Flush of hv1: ';

/**
 * Never on two hosts (nor on none, except the VMs in `mayStop`); never `flushed` while hv1 runs a
 * VM without a flush failure in its failedreason; at most `limit` moves in flight.
 */
function invariants(limit: number, maxInFlight: number[] = [], mayStop: readonly string[] = []) {
  return async (r: Rig): Promise<void> => {
    for (const u of r.uuids) {
      const on = r.where(u);
      assert.ok(on.length === 1 || (on.length === 0 && mayStop.includes(u)), `${u} runs on ${on.join(',') || 'no host'}`);
    }
    if ((await r.domainState('hv1')) === 'flushed') {
      for (const u of r.uuids.filter((x) => r.hvs.hv1.isRunning(x))) {
        assert.ok((await r.admin.read(paths.domain(u).failedReason))?.startsWith(FLUSH_REASON), `flushed while ${u} runs on hv1 without a flush failure`);
      }
    }
    const states = await Promise.all(r.uuids.map((u) => r.admin.read(paths.domain(u).state)));
    const inFlight = states.filter((s) => s === 'migrate' || s === 'migrate-live').length;
    maxInFlight.push(inFlight);
    assert.ok(inFlight <= limit, `${inFlight} moves in flight, limit ${limit}`);
  };
}

const onHv1 = (r: Rig): number => r.uuids.filter((u) => r.hvs.hv1.isRunning(u)).length;

describe('node flush / unflush through three vmds (fake ZK, fake libvirt, virtual time)', () => {
  it('flush of 7 VMs, 3 at a time: all leave hv1 for hv2/hv3, lastnode hv1, then flushed; unflush brings them back, ready', async () => {
    const r = await flushRig({ vms: 7, limits: { concurrency: 3 } });
    await r.clock.advance(3000);
    const peaks: number[] = [];
    await r.setDomainState('hv1', 'flush');
    const flushMs = await stepUntil(r, async () => (await r.domainState('hv1')) === 'flushed', 120_000, invariants(3, peaks));
    assert.equal(onHv1(r), 0);
    assert.equal(Math.max(...peaks), 3, 'the bound is used');
    const spread = new Set(r.uuids.map((u) => r.where(u)[0]));
    assert.deepEqual([...spread].sort(), ['hv2', 'hv3'], 'the selector spreads them');
    for (const u of r.uuids) {
      assert.deepEqual([await r.admin.read(paths.domain(u).state), await r.admin.read(paths.domain(u).lastNode)], ['start', 'hv1']);
    }
    await r.setDomainState('hv1', 'unflush');
    const unflushMs = await stepUntil(r, async () => (await r.domainState('hv1')) === 'ready', 120_000, invariants(3));
    assert.equal(onHv1(r), 7);
    for (const u of r.uuids) assert.deepEqual([await r.admin.read(paths.domain(u).node), await r.admin.read(paths.domain(u).lastNode)], ['hv1', '']);
    assert.deepEqual(r.flushers.hv1.history, ['flush done', 'unflush done']);
    assert.ok(flushMs < 30_000 && unflushMs < 30_000, `flush ${flushMs} ms, unflush ${unflushMs} ms`);
    await r.stop();
  });

  it('bounded concurrency beats one at a time: 8 VMs, each migration 2 s (virtual) — concurrency 4 ≥ 2.5× faster than 1', async () => {
    const took: number[] = [];
    for (const concurrency of [1, 4]) {
      const r = await flushRig({ vms: 8, limits: { concurrency } });
      await r.clock.advance(3000);
      await r.setDomainState('hv1', 'flush');
      took.push(await stepUntil(r, async () => (await r.domainState('hv1')) === 'flushed', 300_000, invariants(concurrency)));
      await r.stop();
    }
    const [one, four] = took as [number, number];
    assert.ok(one / four >= 2.5, `one at a time ${one} ms, four at a time ${four} ms`);
  });

  it('a VM no node fits is shut down with autostart and a failedreason; flushed; ready starts it here again and clears the reason', async () => {
    const r = await flushRig({ vms: 3, memoryMiB: { 2: 20_000 }, acpiShutdownMs: 1000 });
    const big = r.uuids[1]!;
    await r.clock.advance(3000);
    await r.setDomainState('hv1', 'flush');
    await stepUntil(r, async () => (await r.domainState('hv1')) === 'flushed', 60_000, invariants(4, [], [big]));
    assert.deepEqual(r.where(big), []);
    const [state, node, lastNode, autostart, reason] = await r.vmKeys(big);
    assert.deepEqual([state, node, lastNode, autostart], ['stop', 'hv1', '', 'True']);
    assert.match(reason ?? '', /^Flush of hv1: no target node fits \(.*hv2: .*20000 MiB.*\); shut down, node_autostart set \(started again by node ready\)$/);
    assert.equal(onHv1(r), 0);
    await r.setDomainState('hv1', 'unflush');
    await stepUntil(r, async () => (await r.domainState('hv1')) === 'ready', 60_000, invariants(4, [], [big]));
    await stepUntil(r, async () => r.hvs.hv1.isRunning(big) && (await r.vmKeys(big))[4] === '', 10_000, invariants(4, [], [big]));
    assert.deepEqual(await r.vmKeys(big), ['start', 'hv1', '', 'False', '']);
    await stepUntil(r, async () => onHv1(r) === 3, 30_000, invariants(4));
    await r.stop();
  });

  it('a VM whose moves fail 3 times keeps running on hv1 with a failedreason; flushed within 2 s of the last abort; ready from there', async () => {
    const cap = captureLogger();
    const r = await flushRig({ vms: 3, limits: { concurrency: 2, retryPauseMs: 5000 }, methods: { 2: 'live' }, logger: cap.logger });
    const stuck = r.uuids[1]!;
    r.refuse.add(stuck);
    await r.clock.advance(3000);
    await r.setDomainState('hv1', 'flush');
    const tries = (): number => r.exec.lines().filter((l) => l.includes('migrate --live') && l.includes(stuck)).length;
    let lastAbortMs: number | undefined;
    await stepUntil(r, async () => {
      const [state, node] = await r.vmKeys(stuck);
      if (lastAbortMs === undefined && tries() === 9 && state === 'start' && node === 'hv1') lastAbortMs = r.clock.now();
      return (await r.domainState('hv1')) === 'flushed';
    }, 120_000, invariants(2));
    assert.ok(lastAbortMs !== undefined, 'the third round was aborted by the sender');
    assert.ok(r.clock.now() - lastAbortMs <= 2000, `flushed ${r.clock.now() - lastAbortMs} ms after the last abort`);
    assert.equal(tries(), 9, '3 rounds × 3 live attempts');
    assert.deepEqual(r.where(stuck), ['hv1']);
    const [state, node, lastNode, , reason] = await r.vmKeys(stuck);
    assert.deepEqual([state, node, lastNode], ['start', 'hv1', '']);
    assert.match(reason ?? '', /^Flush of hv1: migration to hv[23] failed 3 times: live migration failed: .*Connection refused/);
    assert.equal(onHv1(r), 1);
    const msgs = cap.lines.map((l) => String(l.msg));
    assert.ok(msgs.includes('flush: VM could not be moved; it stays where it runs and is retried'));
    assert.ok(msgs.includes('flush: VM could not be moved; giving up on it (it keeps running here, its failedreason says why)'));
    assert.ok(msgs.includes('flush finished: domainstate flushed; VMs that could not be moved still run here (see their failedreason)'));
    await r.setDomainState('hv1', 'unflush');
    await stepUntil(r, async () => (await r.domainState('hv1')) === 'ready', 60_000, invariants(2));
    assert.equal(onHv1(r), 3);
    assert.deepEqual(await r.vmKeys(stuck), ['start', 'hv1', '', 'False', ''], 'the flush failure is cleared once the node is ready');
    assert.deepEqual(r.flushers.hv1.history, ['flush done', 'unflush done']);
    await r.stop();
  });

  it('a VM given up on and later moved successfully loses the flush failure (the receiver clears failedreason)', async () => {
    const r = await flushRig({ vms: 2, limits: { maxRounds: 1 }, methods: { 1: 'live' } });
    const u = r.uuids[0]!;
    r.refuse.add(u);
    await r.clock.advance(3000);
    await r.setDomainState('hv1', 'flush');
    await stepUntil(r, async () => (await r.domainState('hv1')) === 'flushed', 60_000, invariants(4));
    assert.match((await r.vmKeys(u))[4] ?? '', /^Flush of hv1: migration to hv[23] failed 1 time: /);
    r.refuse.delete(u);
    const p = paths.domain(u);
    await r.admin.write([[p.state, 'migrate-live'], [p.node, 'hv3'], [p.lastNode, 'hv1']]);
    await stepUntil(r, async () => r.where(u)[0] === 'hv3' && (await r.vmKeys(u))[0] === 'start', 60_000, invariants(4));
    assert.deepEqual(await r.vmKeys(u), ['start', 'hv3', 'hv1', 'False', '']);
    await r.stop();
  });

  it('unflush during a flush cancels it: the moves asked for finish, the VMs come back, ready', async () => {
    const r = await flushRig({ vms: 6, limits: { concurrency: 2 } });
    await r.clock.advance(3000);
    await r.setDomainState('hv1', 'flush');
    await stepUntil(r, async () => onHv1(r) <= 4, 60_000, invariants(2));
    await r.setDomainState('hv1', 'unflush');
    // The flush's 2 moves in flight finish while the unflush starts its own 2: 4 at most meanwhile.
    await stepUntil(r, async () => (await r.domainState('hv1')) === 'ready', 120_000, invariants(4));
    await r.clock.advance(5000);
    assert.equal(onHv1(r), 6);
    assert.deepEqual(r.flushers.hv1.history, ['flush cancelled', 'unflush done']);
    for (const n of NODES.filter((x): x is NodeName => x !== 'hv1')) assert.equal(await r.domainState(n), 'ready');
    await r.stop();
  });

  it('a step that throws (libvirt here unreachable) is retried with growing delays, logged once, and the flush still ends', async () => {
    const cap = captureLogger();
    const r = await flushRig({ vms: 3, limits: { concurrency: 3 }, logger: cap.logger });
    await r.clock.advance(3000);
    await r.setDomainState('hv1', 'flush');
    await r.clock.advance(100);
    r.hvs.hv1.down = true;
    const listsBefore = cap.lines.length;
    await r.clock.advance(6000);
    const failing = cap.lines.filter((l) => /^flush-step: failed; retrying with growing delays/.test(String(l.msg)));
    assert.equal(failing.length, 1, 'logged once, not at every step');
    assert.equal(failing[0]?.op, 'flush');
    assert.match(String(failing[0]?.err), /^flush step failed: /);
    const retries = cap.lines.slice(listsBefore).filter((l) => /^flush-step: failed again/.test(String(l.msg))).map((l) => l.retryInMs);
    assert.deepEqual(retries.slice(0, 3), [1000, 2000, 2000], 'pollMs doubling, at most 4 × pollMs (debug lines only)');
    r.hvs.hv1.down = false;
    await stepUntil(r, async () => (await r.domainState('hv1')) === 'flushed', 60_000, invariants(3));
    assert.equal(onHv1(r), 0);
    assert.equal(cap.lines.filter((l) => l.msg === 'flush-step: works again').length, 1);
    assert.deepEqual(r.flushers.hv1.history, ['flush done']);
    await r.stop();
  });
});
