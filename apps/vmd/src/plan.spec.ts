import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isOneOf } from '@pvc/zk';
import { VM_STATES, type Action, type DesiredVm, type GuardFacts, type ObservedDomain, type PlanInput, type ShutdownInProgress } from './model.js';
import { plan } from './plan.js';

const ME = 'hv1';
const U = 'aaaaaaaa-0000-0000-0000-000000000001';
const GUARD: GuardFacts = { zkConnected: true, domainState: 'ready', daemonState: 'run', knownNodes: new Set(['hv1', 'hv2']) };

function input(o: { state?: string; node?: string; running?: boolean; guard?: Partial<GuardFacts>; sh?: ShutdownInProgress; now?: number }): PlanInput {
  const s = o.state ?? 'start';
  // What the desired store makes of the key: a known state, or the text of a bad value.
  const state = isOneOf(VM_STATES, s) ? { state: s } : { state: undefined, badState: s };
  const vm: DesiredVm = { uuid: U, name: 'vm1', ...state, node: o.node ?? ME, memoryMiB: 128 };
  const dom: ObservedDomain = { uuid: U, name: 'vm1', active: true, state: 'running', maxMemKiB: 1, memKiB: 1, vcpus: 1, cpuTimeNs: 1 };
  return {
    node: ME,
    desired: new Map([[U, vm]]),
    observed: new Map(o.running ? [[U, dom]] : []),
    guard: { ...GUARD, ...o.guard },
    shutdowns: new Map(o.sh ? [[U, o.sh]] : []),
    nowMs: o.now ?? 10_000,
    shutdownTimeoutMs: 5000,
  };
}

/** One action as a short string, e.g. "destroy>stop", "log:unknown-state". */
function brief(a: Action): string {
  switch (a.kind) {
    case 'start': return 'start';
    case 'destroy': return `destroy${a.writeState ? `>${a.writeState}` : ''}`;
    case 'shutdown': return `shutdown>${a.then}`;
    case 'set-state': return `set:${a.state}`;
    case 'forget-shutdown': return 'forget';
    case 'log': return `log:${a.reason}`;
    case 'migrate-send': return `send>${a.target}`;
    case 'migrate-receive': return 'receive';
  }
}

// [node, running, state, expected actions]
const TABLE: [string, boolean, string, string[]][] = [
  [ME, true, 'start', []],
  [ME, true, 'restart', ['shutdown>start']],
  [ME, true, 'shutdown', ['shutdown>stop']],
  [ME, true, 'stop', ['destroy>stop']],
  [ME, true, 'disable', []],
  [ME, true, 'fail', []],
  [ME, true, 'provision', []],
  [ME, true, 'migrate', ['set:start']],
  [ME, true, 'migrate-live', ['set:start']],
  [ME, true, 'unmigrate', ['log:unmigrate-state']],
  [ME, false, 'start', ['start']],
  [ME, false, 'restart', ['set:start']],
  [ME, false, 'shutdown', ['set:stop']],
  [ME, false, 'stop', []],
  [ME, false, 'disable', []],
  [ME, false, 'fail', []],
  [ME, false, 'mirror', []],
  [ME, false, 'migrate', ['receive']],
  [ME, false, 'migrate-live', ['receive']],
  [ME, false, 'unmigrate', ['log:unmigrate-state']],
  ['hv2', true, 'start', ['destroy']],
  ['hv2', true, 'stop', ['destroy']],
  ['hv2', true, 'disable', ['destroy']],
  ['hv2', true, 'fail', ['destroy']],
  ['hv2', true, 'shutdown', ['shutdown>stop']],
  ['hv2', true, 'migrate', ['send>hv2']],
  ['hv2', true, 'migrate-live', ['send>hv2']],
  ['hv2', true, 'unmigrate', ['log:unmigrate-state']],
  ['hv2', false, 'start', []],
  ['hv2', false, 'migrate', []],
  ['hv2', false, 'shutdown', []],
  // bad input: never destructive
  [ME, true, 'bogus', ['log:unknown-state']],
  ['hv2', true, 'bogus', ['log:unknown-state']],
  ['nosuch', true, 'start', ['log:unknown-node']],
  ['nosuch', false, 'start', ['log:unknown-node']],
];

describe('plan(): the decision table', () => {
  for (const [node, running, state, want] of TABLE) {
    it(`node=${node === ME ? 'me' : node} running=${running} state=${state} → ${want.join(',') || 'nothing'}`, () => {
      assert.deepEqual(plan(input({ node, running, state })).map(brief), want);
    });
  }
});

describe('plan(): guards', () => {
  const cases: [string, Partial<GuardFacts>, string[]][] = [
    ['fence-flush blocks starts', { domainState: 'fence-flush' }, ['log:start-blocked']],
    ['fence-flush blocks starts even after the node came back (init/run)', { domainState: 'fence-flush', daemonState: 'init' }, ['log:start-blocked']],
    ['daemonstate dead blocks starts', { daemonState: 'dead' }, ['log:start-blocked']],
    ['daemonstate fenced blocks starts', { daemonState: 'fenced' }, ['log:start-blocked']],
    ['unknown own domainstate blocks starts', { domainState: undefined }, ['log:start-blocked']],
    ['halted (stopAll) blocks starts', { halted: 'reset' }, ['log:start-blocked']],
    ['flushed does not block (the original starts what is assigned here)', { domainState: 'flushed' }, ['start']],
    ['node list not read yet: the node check is skipped', { knownNodes: undefined }, ['start']],
  ];
  for (const [what, guard, want] of cases) {
    it(what, () => assert.deepEqual(plan(input({ state: 'start', guard })).map(brief), want));
  }
  it('nothing at all while the ZK session is not connected (no destroy, no start)', () => {
    assert.deepEqual(plan(input({ node: 'hv2', running: true, state: 'start', guard: { zkConnected: false } })), []);
    assert.deepEqual(plan(input({ state: 'start', guard: { zkConnected: false } })), []);
  });
  it('fence-flush still lets a VM assigned elsewhere be destroyed here (no split brain)', () => {
    assert.deepEqual(plan(input({ node: 'hv2', running: true, guard: { domainState: 'fence-flush' } })).map(brief), ['destroy']);
  });
});

describe('plan(): graceful shutdown over several passes', () => {
  const sh = (then: 'stop' | 'start', sinceMs: number): ShutdownInProgress => ({ then, sinceMs });
  it('waits while within vm_shutdown_timeout', () => {
    assert.deepEqual(plan(input({ state: 'shutdown', running: true, sh: sh('stop', 8000), now: 10_000 })).map(brief), []);
  });
  it('destroys and writes stop after the timeout', () => {
    assert.deepEqual(plan(input({ state: 'shutdown', running: true, sh: sh('stop', 1000), now: 10_000 })).map(brief), ['destroy>stop']);
  });
  it('restart: destroys after the timeout without writing, then writes start once off', () => {
    assert.deepEqual(plan(input({ state: 'restart', running: true, sh: sh('start', 1000), now: 10_000 })).map(brief), ['destroy']);
    assert.deepEqual(plan(input({ state: 'restart', running: false, sh: sh('start', 1000) })).map(brief), ['forget', 'set:start']);
  });
  it('shutdown turned into restart: asks again with the new follow-up', () => {
    assert.deepEqual(plan(input({ state: 'restart', running: true, sh: sh('stop', 9000) })).map(brief), ['shutdown>start']);
  });
  it('state went back to start while shutting down: the record is dropped', () => {
    assert.deepEqual(plan(input({ state: 'start', running: true, sh: sh('stop', 9000) })).map(brief), ['forget']);
  });
  it('a record of a VM that vanished from ZK is dropped', () => {
    const i = input({ state: 'start' });
    const out = plan({ ...i, desired: new Map(), shutdowns: new Map([[U, sh('stop', 0)]]) });
    assert.deepEqual(out.map(brief), ['forget']);
  });
});

describe('plan(): level-based', () => {
  it('the same inputs give the same actions; VMs are planned in UUID order', () => {
    const i = input({ state: 'start' });
    const u2 = '00000000-0000-0000-0000-000000000002';
    const desired = new Map([...i.desired, [u2, { uuid: u2, name: 'vm0', state: 'start', node: ME, memoryMiB: 1 }]]);
    const a = plan({ ...i, desired });
    assert.deepEqual(a, plan({ ...i, desired }));
    assert.deepEqual(a.map((x) => x.uuid), [u2, U]);
  });
  it('a VM missing keys (half-read) gets no action', () => {
    const i = input({});
    const out = plan({ ...i, desired: new Map([[U, { uuid: U, name: undefined, state: 'start', node: ME, memoryMiB: undefined }]]) });
    assert.deepEqual(out.map(brief), ['log:incomplete']);
  });
});

describe('plan(): background jobs (start, migration) in progress', () => {
  it('a VM with a send/receive job running here is left alone (no stale-migrate start, no destroy)', () => {
    for (const [node, running] of [[ME, true], [ME, false], ['hv2', true]] as const) {
      assert.deepEqual(plan({ ...input({ node, running, state: 'migrate' }), busy: new Set([U]) }).map(brief), []);
    }
  });
  it('a VM whose start is in progress is not started again, nor destroyed or shut down meanwhile', () => {
    for (const [node, running, state] of [[ME, false, 'start'], [ME, true, 'stop'], [ME, true, 'shutdown'], ['hv2', true, 'start']] as const) {
      assert.deepEqual(plan({ ...input({ node, running, state }), busy: new Set([U]) }).map(brief), [], `${node} ${running} ${state}`);
    }
    assert.deepEqual(plan({ ...input({ state: 'start' }), busy: new Set(['other']) }).map(brief), ['start']);
  });
});
