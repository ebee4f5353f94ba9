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

/** Never on two hosts or none; never `flushed` while hv1 runs a VM; at most `limit` moves in flight. */
function invariants(limit: number, maxInFlight: number[] = []) {
  return async (r: Rig): Promise<void> => {
    for (const u of r.uuids) assert.equal(r.where(u).length, 1, `${u} runs on ${r.where(u).join(',') || 'no host'}`);
    if ((await r.domainState('hv1')) === 'flushed') assert.deepEqual(r.uuids.filter((u) => r.hvs.hv1.isRunning(u)), [], 'flushed while a VM runs on hv1');
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

  it('a VM that cannot migrate stays on hv1, is retried, then reported; the flush stays in flush; the others leave', async () => {
    const cap = captureLogger();
    const r = await flushRig({ vms: 3, limits: { concurrency: 2, maxRounds: 2, retryPauseMs: 5000 }, methods: { 2: 'live' }, logger: cap.logger });
    r.refuse.add(r.uuids[1]!);
    await r.clock.advance(3000);
    await r.setDomainState('hv1', 'flush');
    for (let i = 0; i < 900; i++) {
      await r.clock.advance(100);
      await invariants(2)(r);
    }
    assert.equal(await r.domainState('hv1'), 'flush');
    assert.deepEqual(r.where(r.uuids[1]!), ['hv1']);
    assert.deepEqual(r.where(r.uuids[0]!).concat(r.where(r.uuids[2]!)).filter((n) => n === 'hv1'), []);
    const p = paths.domain(r.uuids[1]!);
    assert.deepEqual([await r.admin.read(p.state), await r.admin.read(p.node)], ['start', 'hv1']);
    const tries = r.exec.lines().filter((l) => l.includes(`migrate --live`) && l.includes(r.uuids[1]!)).length;
    assert.equal(tries, 6, '2 rounds × 3 live attempts');
    const msgs = cap.lines.map((l) => String(l.msg));
    assert.ok(msgs.includes('flush: VM could not be moved; it stays where it runs and is retried'));
    assert.ok(msgs.includes('flush: VM could not be moved; giving up on it'));
    assert.ok(msgs.some((m) => m.startsWith('flush cannot finish')));
    // Moved by hand meanwhile (the target fixed): the flush notices and finishes.
    r.refuse.delete(r.uuids[1]!);
    await r.admin.write([[p.state, 'migrate-live'], [p.node, 'hv2'], [p.lastNode, 'hv1']]);
    await stepUntil(r, async () => (await r.domainState('hv1')) === 'flushed', 60_000, invariants(2));
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
});
