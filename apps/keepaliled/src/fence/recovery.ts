import type { Logger } from '@pvc/runtime';
import { describeError, mapLimit } from '@pvc/runtime';
import {
  clusterKeys, domainKeys, isOneOf, isZkError, pair, readAllNodeFigures, readKeyIfExists, readKeyWithStat,
  type VmFacts, type VmState, type WritePair, type ZkClient, type ZkOp,
} from '@pvc/zk';
import { planPlacements, type VmRequest } from '@pvc/placement';
import type { EventSink } from '../model.js';
import type { Peers } from '../ports.js';
import { readDomainsOn } from './cluster-view.js';
import { noTargetReason } from './rules.js';
import { setOp } from './set-op.js';

/** Recovery's per-VM transactions in flight at once. */
export const RECOVERY_WRITES = 8;

/** VM states that mean "should be running" — these are restarted elsewhere. Others stay put. */
export const RUNNING_STATES: readonly VmState[] = ['start', 'restart', 'migrate', 'migrate-live', 'unmigrate'];

export interface RecoveryDeps {
  self: string;
  zk: ZkClient;
  logger: Logger;
  events: EventSink;
  peers: Peers;
  /** `functions.enable_storage`: clear RBD locks through cephd before restarting a VM. */
  storageEnabled: boolean;
  /** `system.migration.target_selector`, used when `/config/migration_target_selector` is unset. */
  defaultSelector: string;
}

/** A VM as placement sees it, counted as being on `dead`; a target must have its networks up. */
export function request(vm: VmFacts, dead: string): VmRequest {
  return { name: vm.uuid, memoryMiB: vm.memoryMiB, vcpus: vm.vcpus, currentNode: dead, selector: vm.selector, nodeLimit: vm.nodeLimit, networks: vm.networks };
}

/**
 * Restarts a fenced node's VMs elsewhere: every VM assigned to `dead` in a running state is placed
 * by the cluster's selector (fit checked, a node known to lack one of the VM's networks not chosen,
 * all moves planned together so ten VMs do not land on a node with room for two) and gets `state=start, node=<target>, lastnode=<dead>` in one
 * transaction, guarded by the version of its `node` key so a VM moved meanwhile is left alone.
 * A VM with no target is set `stop` with `node_autostart=True` (what the original meant to do) and
 * `failedreason` = {@link noTargetReason}: it starts when its node is readied again, or earlier
 * when the recovery retry (`retry.ts`) finds it a target. Idempotent: VMs already moved are not touched, so a
 * resumed recovery after a fencer died does each VM once.
 */
export async function recoverVms(deps: RecoveryDeps, dead: string, signal?: AbortSignal): Promise<{ recovered: number; left: number }> {
  const { zk, logger } = deps;
  const vms = (await readDomainsOn(zk, logger, dead)).filter((vm) => isOneOf(RUNNING_STATES, vm.state));
  if (vms.length === 0) return { recovered: 0, left: 0 };
  const nodes = await readAllNodeFigures(zk, logger);
  // This node's configured selector only while the primary has not written the cluster's yet.
  const selector = (await readKeyIfExists(zk, clusterKeys.migrationTargetSelector, { logger })) ?? deps.defaultSelector;
  const plan = planPlacements(vms.map((vm) => request(vm, dead)), nodes, selector, [dead]);
  const placements = vms.map((_, i) => plan.placements[i]?.result);
  // One cephd call for the images of every VM about to move (cephd works on them in parallel): per
  // VM in turn, 5 VMs cost ~1 s of the failover here.
  const flushes = await flushAll(deps, vms.filter((_, i) => placements[i]?.ok === true), dead);
  // Each VM's guarded transaction is its own (read `node`, then multi): up to RECOVERY_WRITES at
  // once, ten VMs' writes were ~0.3 s one after another on a loaded host.
  const moved = await mapLimit([...vms.entries()], RECOVERY_WRITES, async ([i, vm]) => {
    signal?.throwIfAborted();
    const placement = placements[i];
    if (placement && placement.unknownLimitNodes.length > 0) {
      logger.warn({ vm: vm.name, key: domainKeys(vm.uuid).nodeLimit.path, unknown: placement.unknownLimitNodes }, 'node_limit names nodes that do not exist; ignored');
    }
    if (placement?.ok !== true) return stopVm(deps, vm, dead, placement?.reason ?? 'no plan');
    return moveVm(deps, vm, dead, placement.node, { flushed: flushes.get(vm.uuid) });
  });
  const recovered = moved.filter((ok, i) => ok && placements[i]?.ok === true).length;
  return { recovered, left: vms.length - recovered };
}

/** Outcome of clearing one VM's RBD locks: cleared, or why not. */
export type LockFlushOutcome = { ok: true } | { ok: false; reason: string };

/**
 * Clears the RBD locks of every image of `vms` in one FORCE call (cephd marks `dead`'s OSDs down
 * meanwhile); per VM (UUID): cleared, or the failures of its own images (a failed call fails every
 * VM that has images).
 */
async function flushAll(deps: RecoveryDeps, vms: readonly VmFacts[], dead: string): Promise<Map<string, LockFlushOutcome>> {
  const out = new Map<string, LockFlushOutcome>();
  const withImages = deps.storageEnabled ? vms.filter((vm) => vm.rbdList.length > 0) : [];
  for (const vm of vms) if (!withImages.includes(vm)) out.set(vm.uuid, { ok: true });
  if (withImages.length === 0) return out;
  try {
    const r = await deps.peers.flushRbdLocks([...new Set(withImages.flatMap((vm) => vm.rbdList))], dead, { deadlineMs: 30_000 });
    for (const vm of withImages) {
      const failed = r.failed.filter((f) => vm.rbdList.some((image) => f.startsWith(`${image}: `)));
      out.set(vm.uuid, failed.length === 0 ? { ok: true } : { ok: false, reason: failed.join('; ') });
    }
  } catch (err) {
    for (const vm of withImages) out.set(vm.uuid, { ok: false, reason: describeError(err) });
  }
  return out;
}

async function locksCleared(deps: RecoveryDeps, vm: VmFacts, dead: string, flushed: LockFlushOutcome | undefined): Promise<boolean> {
  const outcome = flushed ?? (await flushAll(deps, [vm], dead)).get(vm.uuid) ?? { ok: true };
  if (outcome.ok) return true;
  deps.events({ kind: 'vm-left', node: dead, vm: vm.name, reason: `RBD locks not cleared: ${outcome.reason}`, fencer: deps.self });
  return false;
}

/**
 * Writes `sets` in one transaction unless the VM's `node` changed since we read it (or is no
 * longer `dead`), or any of `checks` (further `check` ops of the caller) fails. False when a guard
 * failed: someone else moved the VM meanwhile.
 */
async function guardedWrite(deps: RecoveryDeps, vm: VmFacts, dead: string, sets: WritePair[], checks: readonly ZkOp[] = []): Promise<boolean> {
  const node = domainKeys(vm.uuid).node;
  const current = await readKeyWithStat(deps.zk, node, { logger: deps.logger });
  if (current === undefined || current.value !== dead) return false;
  try {
    await deps.zk.multi([{ type: 'check', path: node.path, version: current.stat.version }, ...checks, ...sets.map((p) => setOp(p))]);
    return true;
  } catch (err) {
    if (isZkError(err, 'BAD_VERSION', 'NO_NODE')) return false;
    throw err;
  }
}

/** How a move is made: the recovery retry adds its own guards and clears the no-target marks. */
export interface MoveOptions {
  /** Further `check` ops of the transaction (besides the VM's `node` version). */
  checks?: readonly ZkOp[];
  /** A VM recovery could not place earlier: also `node_autostart=False`, `failedreason=""`. */
  retried?: boolean;
  /** Its locks were already flushed (with others' in one call) with this outcome; absent: flush them now. */
  flushed?: LockFlushOutcome | undefined;
}

/**
 * Moves `vm` from `dead` to `target` (`state=start node=<target> lastnode=<dead>`) after clearing
 * its RBD locks, in one transaction guarded by the version of its `node` key (and `opts.checks`).
 * False when the locks could not be cleared or a guard failed.
 */
export async function moveVm(deps: RecoveryDeps, vm: VmFacts, dead: string, target: string, opts: MoveOptions = {}): Promise<boolean> {
  if (!(await locksCleared(deps, vm, dead, opts.flushed))) return false;
  const d = domainKeys(vm.uuid);
  const sets = [pair(d.state, 'start'), pair(d.node, target), pair(d.lastNode, dead)];
  if (opts.retried) sets.push(pair(d.nodeAutostart, false), pair(d.failedReason, ''));
  const moved = await guardedWrite(deps, vm, dead, sets, opts.checks);
  if (moved) deps.events({ kind: 'vm-recovered', node: dead, vm: vm.name, target, fencer: deps.self, ...(opts.retried ? { retried: true } : {}) });
  else deps.logger.info({ vm: vm.name }, 'VM was moved by someone else meanwhile; left alone');
  return moved;
}

async function stopVm(deps: RecoveryDeps, vm: VmFacts, dead: string, reason: string): Promise<boolean> {
  const d = domainKeys(vm.uuid);
  const done = await guardedWrite(deps, vm, dead, [pair(d.state, 'stop'), pair(d.nodeAutostart, true), pair(d.failedReason, noTargetReason(dead, reason))]);
  if (done) deps.events({ kind: 'vm-stopped', node: dead, vm: vm.name, reason: `no target: ${reason}`, fencer: deps.self });
  return false;
}
