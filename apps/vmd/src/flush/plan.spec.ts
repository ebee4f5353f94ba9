import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { NodeFacts } from '@pvc/placement';
import { jobStatus, planFlushStep, type FlushJob, type FlushStepInput, type FlushVm } from './plan.js';
import { gaveUpReason, noTargetReason } from './reasons.js';

const node = (name: string, memFreeMiB: number, domainState = 'ready', networks?: number[]): NodeFacts => ({
  name, daemonState: 'run', domainState, memTotalMiB: 8192, memUsedMiB: 8192 - memFreeMiB, memFreeMiB,
  memAllocMiB: 0, memProvMiB: 0, vcpuAlloc: 0, cpuLoad: 0, domainsCount: 0, ...(networks ? { networks: new Set(networks) } : {}),
});
// networks_up: hv2 has only 1200 up, hv3 has 1100 and 1200 (a VM without networks goes anywhere).
const NODES = [node('hv1', 4000, 'flush', [1100]), node('hv2', 3000, 'ready', [1200]), node('hv3', 2900, 'ready', [1100, 1200])];
const vm = (i: number, over: Partial<FlushVm> = {}): FlushVm => ({
  uuid: `u${i}`, name: `vm${i}`, state: 'start', node: 'hv1', lastNode: '', runningHere: true, memoryMiB: 200, vcpus: 1,
  selector: '', nodeLimit: [], autostart: false, method: 'none', failedReason: '', networks: [], ...over,
});
const LIMITS = { concurrency: 2, maxRounds: 2, retryPauseMs: 1000, jobTimeoutMs: 60_000 };
const input = (over: Partial<FlushStepInput>): FlushStepInput => ({
  kind: 'flush', self: 'hv1', nowMs: 0, vms: [], nodes: NODES, clusterSelector: 'mem', jobs: new Map(), failures: new Map(), limits: LIMITS, ...over,
});
const job = (i: number, target: string | undefined, round = 1, sinceMs = 0): [string, FlushJob] => [`u${i}`, { uuid: `u${i}`, name: `vm${i}`, target, sinceMs, round }];

describe('planFlushStep: flush', () => {
  it('starts at most `concurrency` moves, by name, to the selector\'s node (mem: most free, counting earlier picks), lastnode = self', () => {
    const s = planFlushStep(input({ vms: [vm(3), vm(1), vm(2)] }));
    assert.deepEqual(s.writes.map((w) => [w.name, w.state, w.node, w.lastNode]), [['vm1', 'migrate', 'hv2', 'hv1'], ['vm2', 'migrate', 'hv3', 'hv1']]);
    assert.deepEqual([...s.jobs.keys()], ['u1', 'u2']);
    assert.equal(s.outcome, 'working');
  });

  it('a slot freed by a finished move is refilled in the same step; the moved VM is reported', () => {
    const moved = vm(1, { runningHere: false, node: 'hv2', lastNode: 'hv1' });
    const s = planFlushStep(input({ vms: [moved, vm(2, { state: 'migrate', node: 'hv3' }), vm(3)], jobs: new Map([job(1, 'hv2'), job(2, 'hv3')]) }));
    assert.deepEqual(s.events.map((e) => [e.name, e.kind]), [['vm1', 'moved']]);
    assert.deepEqual(s.writes.map((w) => [w.name, w.node]), [['vm3', 'hv2']], 'vm2 in flight counts on hv3: 3000 > 2900 − 200');
    assert.deepEqual([...s.jobs.keys()].sort(), ['u2', 'u3']);
  });

  it('table: what each VM gets', () => {
    const stale = 'Flush of hv1: migration to hv3 failed 3 times: x';
    const rows: [string, FlushVm, string | undefined][] = [
      ['running, start', vm(1), 'migrate→hv2'],
      ['method live', vm(1, { method: 'live' }), 'migrate-live→hv2'],
      ['lastnode hv2 is kept and excluded', vm(1, { lastNode: 'hv2' }), 'migrate→hv3 last hv2'],
      ['node_limit hv3', vm(1, { nodeLimit: ['hv3'] }), 'migrate→hv3'],
      ['an earlier flush\'s failure of this node is cleared with the move', vm(1, { failedReason: stale }), 'migrate→hv2 reason ""'],
      ['another failure is left as it is (the receiver clears it)', vm(1, { failedReason: 'Migration to hv2 failed: x' }), 'migrate→hv2'],
      ['too big for any node', vm(1, { memoryMiB: 100_000 }), 'shutdown autostart reason "Flush of hv1: no target node fits (hv1: …"'],
      ['network 1100: hv2 lacks it', vm(1, { networks: [1100] }), 'migrate→hv3'],
      ['network 1300: no node has it up', vm(1, { networks: [1200, 1300] }), 'shutdown autostart reason "Flush of hv1: no target node fits (hv1: …"'],
      ['state restart: waits', vm(1, { state: 'restart' }), undefined],
      ['state migrate (someone else\'s): waits', vm(1, { state: 'migrate', node: 'hv2' }), undefined],
      ['stopped here: not running, nothing', vm(1, { state: 'stop', runningHere: false }), undefined],
      ['assigned elsewhere, not here', vm(1, { node: 'hv2', runningHere: false }), undefined],
    ];
    for (const [what, v, want] of rows) {
      const w = planFlushStep(input({ vms: [v] })).writes[0];
      const reason = w?.failedReason === undefined ? '' : ` reason "${w.failedReason.slice(0, 40)}${w.failedReason.length > 40 ? '…' : ''}"`;
      const got = w === undefined ? undefined
        : w.state === 'shutdown' ? `shutdown${w.autostart ? ' autostart' : ''}${reason}`
        : `${w.state}→${w.node}${w.lastNode !== 'hv1' ? ` last ${w.lastNode}` : ''}${reason}`;
      assert.equal(got, want, what);
    }
  });
  it('a VM\'s networks: the reason names each node lacking one (networks_up), after the state checks', () => {
    const w = planFlushStep(input({ vms: [vm(1, { networks: [1300] })] })).writes[0];
    assert.equal(w?.failedReason, 'Flush of hv1: no target node fits (hv1: current node of the VM; hv2: lacks network 1300 (vmbr1300); hv3: lacks network 1300 (vmbr1300)); shut down, node_autostart set (started again by node ready)');
  });

  it('the failedreason texts: no target (placement\'s reason), given up (the sender\'s prefix dropped, rounds)', () => {
    assert.equal(noTargetReason('hv1', 'hv2: domain state flushed'),
      'Flush of hv1: no target node fits (hv2: domain state flushed); shut down, node_autostart set (started again by node ready)');
    assert.equal(gaveUpReason('hv1', 'hv2', 3, 'Migration to hv2 failed: Timed out waiting for peer'), 'Flush of hv1: migration to hv2 failed 3 times: Timed out waiting for peer');
    assert.equal(gaveUpReason('hv1', 'hv3', 1, 'no result within 60000 ms (state migrate, node hv3)'), 'Flush of hv1: migration to hv3 failed 1 time: no result within 60000 ms (state migrate, node hv3)');
    assert.equal(gaveUpReason('hv1', undefined, 2, 'no result within 60000 ms (state shutdown, node hv1)'), 'Flush of hv1: shutdown (no target) failed 2 times: no result within 60000 ms (state shutdown, node hv1)');
  });

  it('done only when no VM runs here; a VM still running (any state) keeps it working', () => {
    assert.equal(planFlushStep(input({ vms: [vm(1, { runningHere: false, node: 'hv2' })] })).outcome, 'done');
    assert.equal(planFlushStep(input({ vms: [vm(1, { state: 'shutdown' })] })).outcome, 'working');
    assert.equal(planFlushStep(input({ vms: [vm(1, { state: 'disable', node: 'hv2' })] })).outcome, 'working');
    assert.equal(planFlushStep(input({ vms: [] })).outcome, 'done');
  });

  it('an aborted move (start, node back to self, running here) is retried after the pause, then given up: failedreason, lastnode cleared, done', () => {
    const failedVm = vm(1, { failedReason: 'Migration to hv2 failed: Timed out waiting for peer', lastNode: 'hv1' });
    const s1 = planFlushStep(input({ nowMs: 5000, vms: [failedVm], jobs: new Map([job(1, 'hv2')]) }));
    assert.deepEqual(s1.events.map((e) => [e.kind, e.detail]), [['failed', 'try 1/2: Migration to hv2 failed: Timed out waiting for peer']]);
    assert.deepEqual(s1.writes, [], 'not retried before the pause');
    assert.equal(s1.failures.get('u1')?.retryAtMs, 6000);
    assert.equal(s1.outcome, 'working');
    const s2 = planFlushStep(input({ nowMs: 6000, vms: [failedVm], failures: s1.failures }));
    assert.deepEqual(s2.writes.map((w) => w.node), ['hv2']);
    assert.equal(s2.jobs.get('u1')?.round, 2);
    const s3 = planFlushStep(input({ nowMs: 9000, vms: [failedVm], jobs: s2.jobs, failures: s2.failures }));
    assert.deepEqual(s3.events.map((e) => e.kind), ['gave-up']);
    const reason = 'Flush of hv1: migration to hv2 failed 2 times: Timed out waiting for peer';
    assert.deepEqual(s3.writes.map((w) => [w.name, w.state, w.failedReason, w.lastNode]), [['vm1', undefined, reason, '']], 'only failedreason (+ its own lastnode)');
    assert.equal(s3.outcome, 'working', 'flushed only once the reason reads back');
    const settled = { ...failedVm, failedReason: reason, lastNode: '' };
    const s4 = planFlushStep(input({ nowMs: 9500, vms: [settled, vm(2, { runningHere: false, node: 'hv3' })], failures: s3.failures }));
    assert.deepEqual([s4.writes, s4.outcome, s4.leftHere], [[], 'done', ['u1']]);
    assert.deepEqual(planFlushStep(input({ nowMs: 99_000, vms: [settled], failures: s3.failures })).writes, [], 'never tried again in this flush');
  });

  it('given up but not settled here (still migrating after a timeout, or state changed): no reason yet, not done', () => {
    const gaveUp = new Map([['u1', { round: 2, retryAtMs: Infinity, why: 'no result within 60000 ms', target: 'hv2' }]]);
    for (const v of [vm(1, { state: 'migrate', node: 'hv2' }), vm(1, { state: 'shutdown' })]) {
      const s = planFlushStep(input({ vms: [v], failures: gaveUp }));
      assert.deepEqual([s.writes, s.outcome, s.leftHere], [[], 'working', []], v.state);
    }
    const gone = planFlushStep(input({ vms: [vm(1, { runningHere: false, node: 'hv2' })], failures: gaveUp }));
    assert.deepEqual([gone.writes, gone.outcome], [[], 'done'], 'landed after all: nothing to record');
  });

  it('a move with no result within jobTimeoutMs counts as failed', () => {
    const st = jobStatus('flush', job(1, 'hv2')[1], vm(1, { state: 'migrate', node: 'hv2' }), 'hv1', 60_001, 60_000);
    assert.equal(st.s, 'failed');
  });
});

describe('planFlushStep: unflush', () => {
  const un = (over: Partial<FlushStepInput>) => planFlushStep(input({ kind: 'unflush', ...over }));
  it('VMs with lastnode = self come back (bounded); others are left; stopped ones are only reassigned; autostart starts', () => {
    const s = un({ vms: [
      vm(1, { node: 'hv2', lastNode: 'hv1', runningHere: false }),
      vm(2, { node: 'hv3', lastNode: 'hv1', runningHere: false }),
      vm(3, { node: 'hv3', lastNode: 'hv1', runningHere: false }),
      vm(4, { node: 'hv2', lastNode: 'hv1', runningHere: false, state: 'stop' }),
      vm(5, { node: 'hv2', lastNode: 'hv3', runningHere: false }),
      vm(6, { node: 'hv1', runningHere: false, state: 'stop', autostart: true }),
    ] });
    assert.deepEqual(s.writes.map((w) => [w.name, w.state, w.node, w.lastNode, w.autostart]), [
      ['vm6', 'start', undefined, '', false],
      ['vm1', 'migrate', 'hv1', '', undefined],
      ['vm2', 'migrate', 'hv1', '', undefined],
      ['vm4', undefined, 'hv1', '', undefined],
    ]);
    assert.deepEqual([...s.jobs.keys()], ['u1', 'u2']);
  });

  it('done when every move landed here; an aborted one is retried (found by its failure, lastnode was cleared)', () => {
    const back = vm(1, { node: 'hv1', lastNode: '' });
    assert.equal(un({ vms: [back], jobs: new Map([job(1, 'hv1')]) }).outcome, 'done');
    const aborted = vm(1, { node: 'hv2', lastNode: '', runningHere: false, failedReason: 'Migration to hv1 failed: x' });
    const s1 = un({ vms: [aborted], jobs: new Map([job(1, 'hv1')]) });
    assert.equal(s1.outcome, 'working');
    const s2 = un({ nowMs: 2000, vms: [aborted], failures: s1.failures });
    assert.deepEqual(s2.writes.map((w) => [w.state, w.node]), [['migrate', 'hv1']]);
  });

  it('a flush failure of this node on a VM assigned here is cleared, unless the unflush starts it (its start clears it); other reasons are left', () => {
    const mine = 'Flush of hv1: migration to hv2 failed 3 times: x';
    const s = un({ vms: [
      vm(1, { failedReason: mine }),
      vm(2, { failedReason: 'Flush of hv2: migration to hv1 failed 3 times: x' }),
      vm(3, { failedReason: 'Migration to hv2 failed: x' }),
      vm(4, { failedReason: 'Flush of hv1: no target node fits (x); shut down', state: 'disable', runningHere: false, autostart: true }),
      vm(5, { failedReason: 'Flush of hv1: no target node fits (x); shut down', state: 'stop', runningHere: false, autostart: true }),
      vm(6, { failedReason: mine, node: 'hv2', lastNode: 'hv3', runningHere: false }),
    ] });
    assert.deepEqual(s.writes.map((w) => [w.name, w.state, w.failedReason]), [['vm5', 'start', undefined], ['vm1', undefined, ''], ['vm4', undefined, '']]);
    assert.equal(s.outcome, 'working');
    assert.equal(un({ vms: [vm(1)] }).outcome, 'done');
  });

  it('a VM still migrating away (flush cancelled mid-move) is not touched: the unflush waits for it to land', () => {
    const leaving = vm(1, { node: 'hv2', lastNode: 'hv1', state: 'migrate', runningHere: true });
    const s = un({ vms: [leaving] });
    assert.deepEqual(s.writes, []);
    assert.equal(s.outcome, 'working');
    assert.equal(un({ vms: [{ ...leaving, state: 'start', runningHere: false }] }).writes[0]?.state, 'migrate');
  });
});
