import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '@pvc/runtime';
import { codec, paths, resetBadValueReports, type ZkClient } from '@pvc/zk';
import { FakeZkServer } from '@pvc/zk/testing';
import { memoryLogger } from '../testing/fakes.js';
import { seedBase } from '../testing/cluster.js';
import type { FaultCondition } from './conditions.js';
import { applyFaultWrites, planFaultWrites, readStoredFaults, type FaultWrite } from './writer.js';

const T0 = 1_700_000_000_000;
const T1 = T0 + 65_000;
const time = (ms: number): string => codec.localTime.encode(ms);
const F = (id: string, delta = 50, message = `${id} message`): FaultCondition => ({ id, delta, message });

describe('planFaultWrites() (pure)', () => {
  it('a fault not stored yet: one object with every key, status new, ack_time empty', () => {
    const [w] = planFaultWrites([F('DEAD_NODE_HV2', 50, 'Node hv2 was dead and/or fenced')], new Set(), T0);
    assert.ok(w?.kind === 'create');
    assert.equal(w.root, '/faults/DEAD_NODE_HV2');
    assert.deepEqual(w.entries, [
      ['', ''],
      ['first_time', time(T0)],
      ['last_time', time(T0)],
      ['ack_time', ''],
      ['status', 'new'],
      ['delta', '50'],
      ['message', 'Node hv2 was dead and/or fenced'],
    ]);
  });

  it('a stored fault: only last_time, delta and message', () => {
    const [w] = planFaultWrites([F('VM_FAILED_DB', 10, 'VM db was failed: x')], new Set(['VM_FAILED_DB']), T1);
    assert.ok(w?.kind === 'update');
    assert.deepEqual(w.pairs, [
      ['/faults/VM_FAILED_DB/last_time', time(T1)],
      ['/faults/VM_FAILED_DB/delta', '10'],
      ['/faults/VM_FAILED_DB/message', 'VM db was failed: x'],
    ]);
  });

  it('an ID that cannot be a znode name is planned as invalid, the others as usual', () => {
    const writes = planFaultWrites([F('VM_FAILED_A/B'), F('DEAD_NODE_HV1')], new Set(), T0);
    assert.deepEqual(writes.map((w) => w.kind), ['invalid', 'create']);
  });

  it('nothing holds: nothing is written (faults never clear)', () => {
    assert.deepEqual(planFaultWrites([], new Set(['DEAD_NODE_HV1']), T0), []);
  });
});

async function rig(): Promise<{ clock: VirtualClock; server: FakeZkServer; zk: ZkClient; log: ReturnType<typeof memoryLogger> }> {
  resetBadValueReports();
  const clock = new VirtualClock(T0);
  const server = new FakeZkServer({ clock });
  const zk = await server.connect();
  await seedBase(zk);
  return { clock, server, zk, log: memoryLogger() };
}

async function faultValues(zk: ZkClient, id: string): Promise<Record<string, string | undefined>> {
  const f = paths.faults.fault(id);
  const [root, first, last, ack, status, delta, message] = await Promise.all(
    [f.root, f.firstTime, f.lastTime, f.ackTime, f.status, f.delta, f.message].map((p) => zk.read(p)),
  );
  return { root, first, last, ack, status, delta, message };
}

/** Wraps a client to record the name of every mutating call (each one is one transaction). */
function countingZk(zk: ZkClient): { zk: ZkClient; calls: string[] } {
  const calls: string[] = [];
  const mutating = new Set(['create', 'set', 'delete', 'multi', 'write', 'createObject', 'ensurePath']);
  const wrapped = new Proxy(zk, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target) as unknown;
      if (typeof v !== 'function') return v;
      const fn = (v as (...a: unknown[]) => unknown).bind(target);
      return typeof prop === 'string' && mutating.has(prop) ? (...a: unknown[]) => (calls.push(prop), fn(...a)) : fn;
    },
  });
  return { zk: wrapped, calls };
}

const apply = (zk: ZkClient, writes: FaultWrite[], log: ReturnType<typeof memoryLogger>, allowed = (): boolean => true): ReturnType<typeof applyFaultWrites> =>
  applyFaultWrites(zk, writes, allowed, { logger: log.logger });

describe('applyFaultWrites() against the fake ZK', () => {
  it('creates a new fault in one transaction with the original\'s values', async () => {
    const { zk: raw, log } = await rig();
    const { zk, calls } = countingZk(raw);
    const out = await apply(zk, planFaultWrites([F('DEAD_NODE_HV2', 50, 'Node hv2 was dead and/or fenced')], new Set(), T0), log);
    assert.deepEqual(out, [{ id: 'DEAD_NODE_HV2', result: 'created' }]);
    assert.deepEqual(calls, ['createObject'], 'one transaction');
    assert.deepEqual(await faultValues(raw, 'DEAD_NODE_HV2'), {
      root: '', first: time(T0), last: time(T0), ack: '', status: 'new', delta: '50', message: 'Node hv2 was dead and/or fenced',
    });
    assert.deepEqual(log.messages(/fault raised/), ['fault raised']);
  });

  it('an acknowledged fault stays acknowledged: status, ack_time and first_time untouched', async () => {
    const { zk: raw, log } = await rig();
    const { zk, calls } = countingZk(raw);
    await apply(zk, planFaultWrites([F('VM_FAILED_DB', 10, 'VM db was failed: a')], new Set(), T0), log);
    const ackAt = time(T0 + 30_000);
    await zk.write([[paths.faults.fault('VM_FAILED_DB').status, 'ack'], [paths.faults.fault('VM_FAILED_DB').ackTime, ackAt]]);
    const out = await apply(zk, planFaultWrites([F('VM_FAILED_DB', 10, 'VM db was failed: b')], new Set(['VM_FAILED_DB']), T1), log);
    assert.deepEqual(out, [{ id: 'VM_FAILED_DB', result: 'updated' }]);
    assert.deepEqual(calls, ['createObject', 'write', 'write'], 'the update is one write transaction');
    assert.deepEqual(await faultValues(zk, 'VM_FAILED_DB'), {
      root: '', first: time(T0), last: time(T1), ack: ackAt, status: 'ack', delta: '10', message: 'VM db was failed: b',
    });
  });

  it('a bad stored value is logged when read and left alone by the update', async () => {
    const { zk, log } = await rig();
    await apply(zk, planFaultWrites([F('DEAD_NODE_HV1')], new Set(), T0), log);
    const f = paths.faults.fault('DEAD_NODE_HV1');
    await zk.write([[f.status, 'bogus'], [f.firstTime, 'yesterday']]);
    const stored = await readStoredFaults(zk, { logger: log.logger });
    assert.deepEqual(stored, [{ id: 'DEAD_NODE_HV1', status: 'new', delta: 50 }], 'read as the defaults');
    const bad = log.lines.filter((l) => /bad value in Zookeeper/.test(l.msg)).map((l) => l['key']);
    assert.deepEqual(bad.sort(), [f.firstTime, f.status].sort());
    await apply(zk, planFaultWrites([F('DEAD_NODE_HV1', 50, 'again')], new Set(['DEAD_NODE_HV1']), T1), log);
    const v = await faultValues(zk, 'DEAD_NODE_HV1');
    assert.equal(v['status'], 'bogus');
    assert.equal(v['first'], 'yesterday');
    assert.equal(v['last'], time(T1));
    assert.equal(v['message'], 'again');
  });

  it('a failed write is logged and the next fault is still written', async () => {
    const { server, zk, log } = await rig();
    server.failNextWrite({ code: 'MARSHALLING_ERROR' });
    const out = await apply(zk, planFaultWrites([F('A_1'), F('B_2')], new Set(), T0), log);
    assert.equal(out[0]?.result, 'failed');
    assert.deepEqual(out[1], { id: 'B_2', result: 'created' });
    assert.equal(await zk.exists('/faults/A_1'), undefined, 'nothing half-written');
    assert.deepEqual(log.messages(/could not write fault/), ['could not write fault; the next pass tries again']);
  });

  it('a fault created meanwhile by another writer is updated instead', async () => {
    const { zk, log } = await rig();
    const planned = planFaultWrites([F('DEAD_NODE_HV3', 50, 'ours')], new Set(), T1);
    await apply(zk, planFaultWrites([F('DEAD_NODE_HV3', 50, 'theirs')], new Set(), T0), log);
    assert.deepEqual(await apply(zk, planned, log), [{ id: 'DEAD_NODE_HV3', result: 'updated' }]);
    const v = await faultValues(zk, 'DEAD_NODE_HV3');
    assert.deepEqual([v['first'], v['last'], v['status'], v['message']], [time(T0), time(T1), 'new', 'ours']);
  });

  it('an invalid ID is logged, never written; writes stop once no longer allowed', async () => {
    const { zk, log } = await rig();
    let allowed = true;
    const writes = planFaultWrites([F('X/Y'), F('A_1'), F('B_2')], new Set(), T0);
    const out = await apply(zk, writes, log, () => {
      const now = allowed;
      allowed = false;
      return now;
    });
    assert.deepEqual(out.map((o) => o.result), ['failed', 'created', 'skipped']);
    assert.deepEqual(await zk.children('/faults'), ['A_1']);
  });
});

describe('readStoredFaults()', () => {
  it('undefined when /faults does not exist', async () => {
    const { zk, log } = await rig();
    await zk.delete('/faults');
    assert.equal(await readStoredFaults(zk, { logger: log.logger }), undefined);
  });
  it('every fault with status and delta, sorted by ID', async () => {
    const { zk, log } = await rig();
    await apply(zk, planFaultWrites([F('B_2', 10), F('A_1', 50)], new Set(), T0), log);
    await zk.write([[paths.faults.fault('B_2').status, 'ack']]);
    assert.deepEqual(await readStoredFaults(zk, { logger: log.logger }), [
      { id: 'A_1', status: 'new', delta: 50 },
      { id: 'B_2', status: 'ack', delta: 10 },
    ]);
  });
});
