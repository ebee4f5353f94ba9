import type { Action, DesiredVm, Expect, GuardFacts, PlanInput, VmState } from './model.js';

/**
 * The decision table of the original's `manage_vm_state` (inventory §5.2) as a pure function:
 * desired (ZK) + observed (libvirt) + guards → actions. Level-based: the same inputs give the same
 * actions, so a pass after a restart of vmd or libvirtd, or after a lost watch, converges without
 * repeating what is already done (a running domain is never started again; a stopped one never
 * destroyed).
 *
 * Rows (me = this node; running = active in libvirt here):
 * | node | running | state | action |
 * |---|---|---|---|
 * | me | yes | start | none |
 * | me | yes | restart | graceful shutdown, then (off) `start` |
 * | me | yes | shutdown | graceful shutdown; after vm_shutdown_timeout destroy; write `stop` |
 * | me | yes | stop | destroy, write `stop` |
 * | me | no | start | start (unless guarded: fence-flush, dead/fenced, node unknown) |
 * | me | no | restart | write `start` |
 * | me | no | shutdown | write `stop` (what shutdown_vm writes once the domain is off) |
 * | me | no | stop | none |
 * | other | yes | shutdown | graceful shutdown here (then `stop`) |
 * | other | yes | anything else (known) | destroy, no state write |
 * | any | any | disable, fail, provision, import, restore, mirror, delete | none (other than the row above) |
 * | me | yes | migrate, migrate-live | stale migrate: write `start` |
 * | me | no | migrate, migrate-live | receive (background job, §5.4) |
 * | other | yes | migrate, migrate-live | send (background job: live, fallback shutdown unless forced) |
 * | any | any | unmigrate | log (never written by the API: unmigrate writes `migrate`) |
 * | any | any | (start or migration job running here) | none |
 *
 * Bad input never leads to a destructive action: an unknown state or a `node` naming no node is
 * logged and the VM is left as it is.
 */
export function plan(input: PlanInput): Action[] {
  if (!input.guard.zkConnected) return [];
  const actions: Action[] = [];
  const uuids = [...input.desired.keys()].sort();
  for (const uuid of uuids) {
    const vm = input.desired.get(uuid);
    if (vm) actions.push(...planVm(vm, input));
  }
  for (const uuid of [...input.shutdowns.keys()].sort()) {
    if (!input.desired.has(uuid)) actions.push({ kind: 'forget-shutdown', uuid });
  }
  return actions;
}

const MIGRATION_STATES: readonly string[] = ['migrate', 'migrate-live'];
const SHUTTING: readonly string[] = ['shutdown', 'restart'];

/** Why starting a VM here is not allowed now, or undefined when it is (the fencing contract). */
export function startBlockedBy(guard: GuardFacts): string | undefined {
  if (guard.halted !== undefined) return `vmd stopped every VM (${guard.halted}) and starts none until restarted`;
  if (guard.domainState === undefined) return 'this node\'s domainstate is unknown (node not registered?)';
  if (guard.domainState === 'fence-flush') return 'this node is being fence-flushed (domainstate fence-flush)';
  if (guard.daemonState === 'dead' || guard.daemonState === 'fenced') return `this node's daemonstate is ${guard.daemonState}`;
  return undefined;
}

function planVm(vm: DesiredVm, input: PlanInput): Action[] {
  const { uuid } = vm;
  const name = vm.name ?? uuid;
  if (input.busy?.has(uuid)) return [];
  const running = input.observed.get(uuid)?.active ?? false;
  const sh = input.shutdowns.get(uuid);
  const forget: Action[] = sh && (!running || !SHUTTING.includes(vm.state ?? '')) ? [{ kind: 'forget-shutdown', uuid }] : [];
  if (vm.badState !== undefined) {
    return [...forget, { kind: 'log', uuid, name, reason: 'unknown-state', detail: `state key holds unknown value "${vm.badState}"` }];
  }
  if (vm.state === undefined || vm.node === undefined || vm.name === undefined) {
    return [...forget, { kind: 'log', uuid, name, reason: 'incomplete', detail: 'state, node or name key missing' }];
  }
  const known = input.guard.knownNodes;
  if (known !== undefined && !known.has(vm.node)) {
    return [...forget, { kind: 'log', uuid, name, reason: 'unknown-node', detail: `node key names no node: "${vm.node}"` }];
  }
  const expect = { state: vm.state, node: vm.node };
  const mine = vm.node === input.node;
  if (vm.state === 'unmigrate') {
    return [...forget, { kind: 'log', uuid, name, reason: 'unmigrate-state', detail: 'state unmigrate is never written by the API (unmigrate writes migrate): left alone' }];
  }
  if (MIGRATION_STATES.includes(vm.state) && (mine || running)) return [...forget, migrationRow(uuid, name, mine, running, expect)];
  const rows = mine ? mineRow(vm.state, running, name, uuid, expect, input) : otherRow(vm.state, running, name, uuid, expect, input);
  return [...forget, ...rows];
}

function migrationRow(uuid: string, name: string, mine: boolean, running: boolean, expect: Expect): Action {
  if (!mine) return { kind: 'migrate-send', uuid, name, target: expect.node, expect };
  if (!running) return { kind: 'migrate-receive', uuid, name, expect };
  return { kind: 'set-state', uuid, name, state: 'start', expect, why: 'stale migrate: the VM already runs here' };
}

function mineRow(state: VmState, running: boolean, name: string, uuid: string, expect: Expect, input: PlanInput): Action[] {
  if (running) {
    if (state === 'restart') return shutdownRow(uuid, name, 'start', expect, input);
    if (state === 'shutdown') return shutdownRow(uuid, name, 'stop', expect, input);
    if (state === 'stop') return [{ kind: 'destroy', uuid, name, writeState: 'stop', expect, why: 'state is stop' }];
    return [];
  }
  if (state === 'start') {
    const blocked = startBlockedBy(input.guard);
    return blocked ? [{ kind: 'log', uuid, name, reason: 'start-blocked', detail: blocked }] : [{ kind: 'start', uuid, name, expect }];
  }
  if (state === 'restart') return [{ kind: 'set-state', uuid, name, state: 'start', expect, why: 'restart: domain is off' }];
  if (state === 'shutdown') return [{ kind: 'set-state', uuid, name, state: 'stop', expect, why: 'shutdown: domain is off' }];
  return [];
}

function otherRow(state: VmState, running: boolean, name: string, uuid: string, expect: Expect, input: PlanInput): Action[] {
  if (!running) return [];
  if (state === 'shutdown') return shutdownRow(uuid, name, 'stop', expect, input);
  return [{ kind: 'destroy', uuid, name, writeState: undefined, expect, why: `assigned to ${expect.node}` }];
}

function shutdownRow(uuid: string, name: string, then: 'stop' | 'start', expect: Expect, input: PlanInput): Action[] {
  const sh = input.shutdowns.get(uuid);
  if (sh === undefined || sh.then !== then) return [{ kind: 'shutdown', uuid, name, then, expect }];
  if (input.nowMs - sh.sinceMs < input.shutdownTimeoutMs) return [];
  const why = `graceful shutdown did not finish within ${input.shutdownTimeoutMs} ms`;
  return [{ kind: 'destroy', uuid, name, writeState: then === 'stop' ? 'stop' : undefined, expect, why }];
}
