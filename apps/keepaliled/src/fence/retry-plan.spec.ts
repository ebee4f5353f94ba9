import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { NodeFacts } from '@pvc/placement';
import type { VmFacts } from '@pvc/zk';
import { isRecoverable, isWaitingVm, planRetries, recoverableNodes, type RetryNodeView, type RetryRules } from './retry-plan.js';
import { noTargetReason, resetWaitMs } from './rules.js';

const view = (daemonState: string | undefined, domainState: string | undefined, silentMs?: number): RetryNodeView =>
  ({ name: 'hv3', daemonState, domainState, silentMs });
const MIGRATE: RetryRules = { failedFence: 'migrate', resetWaitMs: 20_000 };
const NONE: RetryRules = { failedFence: 'none', resetWaitMs: 20_000 };

// [what, node, rules, recoverable]
const NODES: [string, RetryNodeView, RetryRules, boolean][] = [
  ['fenced + flushed (IPMI confirmed off, recovery done)', view('fenced', 'flushed', 0), NONE, true],
  ['fenced + fence-flush: a fencer is still at work', view('fenced', 'fence-flush', 60_000), MIGRATE, false],
  ['fenced + ready (successful_fence none: its VMs stay)', view('fenced', 'ready', 60_000), MIGRATE, false],
  ['dead + flushed, failed_fence none', view('dead', 'flushed', 60_000), NONE, false],
  ['dead + flushed, failed_fence migrate, silent less than the reset wait', view('dead', 'flushed', 19_999), MIGRATE, false],
  ['dead + flushed, failed_fence migrate, silent the whole reset wait', view('dead', 'flushed', 20_000), MIGRATE, true],
  ['dead + flushed, never seen by us (just started): wait', view('dead', 'flushed', undefined), MIGRATE, false],
  ['dead + flushed, suicide off', view('dead', 'flushed', 60_000), { failedFence: 'migrate', resetWaitMs: undefined }, false],
  ['dead + fence-flush', view('dead', 'fence-flush', 60_000), MIGRATE, false],
  ['run + flushed: back, waits for ready', view('run', 'flushed', 0), MIGRATE, false],
  ['init + flushed: booting', view('init', 'flushed', 0), MIGRATE, false],
  ['unknown states', view(undefined, undefined, 60_000), MIGRATE, false],
];

describe('isRecoverable(): whose VMs may start elsewhere', () => {
  for (const [what, n, rules, want] of NODES) it(`${what} → ${want}`, () => assert.equal(isRecoverable(n, rules), want));
  it('recoverableNodes() keeps the order and only the recoverable', () => {
    const nodes = [{ ...view('fenced', 'flushed'), name: 'hv1' }, { ...view('run', 'ready'), name: 'hv2' }, { ...view('dead', 'flushed', 30_000), name: 'hv3' }];
    assert.deepEqual(recoverableNodes(nodes, MIGRATE), ['hv1', 'hv3']);
    assert.deepEqual(recoverableNodes(nodes, NONE), ['hv1']);
  });
  it('the reset wait is the fencer\'s: suicide_intervals × interval + max(interval, 5 s); none without suicide', () => {
    assert.equal(resetWaitMs(5_000, 3), 20_000);
    assert.equal(resetWaitMs(1_000, 2), 7_000);
    assert.equal(resetWaitMs(5_000, 0), undefined);
  });
});

const REASON = noTargetReason('hv3', 'hv2: domain state flushed');

function vm(uuid: string, o: Partial<VmFacts> = {}): VmFacts {
  return {
    uuid, name: `vm-${uuid}`, state: 'stop', node: 'hv3', lastNode: '', memoryMiB: 2_048, vcpus: 2, selector: 'none', nodeLimit: [],
    autostart: true, migrationMethod: 'none', failedReason: REASON, rbdList: [], networks: [], ...o,
  };
}

// [what, vm, waiting]
const VMS: [string, VmFacts, boolean][] = [
  ['stop + autostart + no-target reason on a recoverable node', vm('a'), true],
  ['started meanwhile', vm('a', { state: 'start' }), false],
  ['autostart cleared (an operator keeps it down)', vm('a', { autostart: false }), false],
  ['another reason (a flush without target)', vm('a', { failedReason: 'migration aborted' }), false],
  ['no reason', vm('a', { failedReason: '' }), false],
  ['moved to another node', vm('a', { node: 'hv2' }), false],
];

describe('isWaitingVm()', () => {
  for (const [what, v, want] of VMS) it(`${what} → ${want}`, () => assert.equal(isWaitingVm(v, new Set(['hv3'])), want));
  it('the no-target reason names the dead node and placement\'s reason', () => {
    assert.equal(REASON, 'Recovery from fenced node hv3: no target (hv2: domain state flushed)');
  });
});

function node(name: string, o: Partial<NodeFacts> = {}): NodeFacts {
  return {
    name, daemonState: 'run', domainState: 'ready', memTotalMiB: 8_192, memUsedMiB: 0, memFreeMiB: 8_192, memAllocMiB: 0, memProvMiB: 0,
    vcpuAlloc: 0, cpuLoad: 0, domainsCount: 0, ...o,
  };
}

const brief = (plan: ReturnType<typeof planRetries>): { moves: string[]; left: string[] } => ({
  moves: plan.moves.map((m) => `${m.vm.uuid}:${m.from}->${m.target}`),
  left: plan.left.map((l) => `${l.vm.uuid}: ${l.reason}`),
});

describe('planRetries()', () => {
  const dead = node('hv3', { daemonState: 'fenced', domainState: 'flushed', memFreeMiB: 0 });
  it('every waiting VM goes to a ready node with room, in UUID order, planned together', () => {
    const plan = planRetries({ waiting: [vm('b'), vm('a')], pending: [], nodes: [node('hv1', { memFreeMiB: 3_000 }), node('hv2', { memFreeMiB: 3_000 }), dead], selector: 'mem' });
    assert.deepEqual(brief(plan), { moves: ['a:hv3->hv1', 'b:hv3->hv2'], left: [] });
  });
  it('no ready node: every VM is left with placement\'s reason (nothing written)', () => {
    const plan = planRetries({ waiting: [vm('a')], pending: [], nodes: [node('hv2', { domainState: 'flushed' }), dead], selector: 'mem' });
    assert.deepEqual(brief(plan), { moves: [], left: ['a: hv2: domain state flushed; hv3: current node of the VM'] });
  });
  it('room for one: the first VM moves, the second is left', () => {
    const plan = planRetries({ waiting: [vm('a'), vm('b')], pending: [], nodes: [node('hv2', { memFreeMiB: 3_000 }), dead], selector: 'mem' });
    assert.deepEqual(brief(plan).moves, ['a:hv3->hv2']);
    assert.match(brief(plan).left[0] ?? '', /^b: hv2: 952 MiB free < 2048 MiB needed/);
  });
  it('a VM assigned to a target that does not run it yet counts there: the lagging figures are not filled twice', () => {
    const pending = [{ vm: vm('p', { state: 'start', node: 'hv2', memoryMiB: 2_048 }), node: 'hv2' }];
    const plan = planRetries({ waiting: [vm('a')], pending, nodes: [node('hv2', { memFreeMiB: 3_000 }), dead], selector: 'mem' });
    assert.deepEqual(brief(plan).moves, []);
    assert.match(brief(plan).left[0] ?? '', /hv2: 952 MiB free < 2048 MiB needed/);
  });
  it('the VM\'s own selector and node_limit are honoured', () => {
    const plan = planRetries({ waiting: [vm('a', { nodeLimit: ['hv2'] })], pending: [], nodes: [node('hv1'), node('hv2', { memFreeMiB: 4_000 }), dead], selector: 'mem' });
    assert.deepEqual(brief(plan).moves, ['a:hv3->hv2']);
  });
  it('a node known to lack one of the VM\'s networks is not chosen; a node whose networks are unknown may be', () => {
    const lacking = node('hv1', { memFreeMiB: 8_000, networks: new Set([1200]) });
    const plan = planRetries({ waiting: [vm('a', { networks: [1100] })], pending: [], nodes: [lacking, node('hv2', { memFreeMiB: 4_000, networks: new Set([1100]) }), dead], selector: 'mem' });
    assert.deepEqual(brief(plan).moves, ['a:hv3->hv2']);
    const none = planRetries({ waiting: [vm('a', { networks: [1100] })], pending: [], nodes: [lacking, dead], selector: 'mem' });
    assert.deepEqual(brief(none).left, ['a: hv1: lacks network 1100 (vmbr1100); hv3: current node of the VM']);
    const unknown = planRetries({ waiting: [vm('a', { networks: [1100] })], pending: [], nodes: [node('hv1'), dead], selector: 'mem' });
    assert.deepEqual(brief(unknown).moves, ['a:hv3->hv1']);
  });
  it('nothing waiting: nothing planned', () => {
    assert.deepEqual(brief(planRetries({ waiting: [], pending: [], nodes: [node('hv1')], selector: 'mem' })), { moves: [], left: [] });
  });
});
