/**
 * The recovery retry's decisions, pure: which dead nodes' VMs may be restarted elsewhere, which
 * VMs wait for a target, and where they go. The I/O around it is `retry.ts`.
 *
 * @module
 */
import { planPlacements, withPlacement, type NodeFacts } from '@pvc/placement';
import type { VmFacts } from '@pvc/zk';
import { request } from './recovery.js';
import { isNoTargetReason } from './rules.js';

/** One node as the retry sees it: its watched states and how long its keepalive has not changed. */
export interface RetryNodeView {
  name: string;
  daemonState: string | undefined;
  domainState: string | undefined;
  /** By this observer's clock, restarted by our reconnections (`LivenessTracker.silentUnvouchedForMs`); undefined when never seen. */
  silentMs: number | undefined;
}

/** The fencing settings the rule reads (this coordinator's own config). */
export interface RetryRules {
  /** `failed_fence`. */
  failedFence: 'migrate' | 'none';
  /** See `resetWaitMs` (`rules.ts`); undefined when suicide is off. */
  resetWaitMs: number | undefined;
}

/**
 * Whether nothing can run on `node` any more, so its VMs may start elsewhere. Only after the
 * fencer's recovery finished (`domainstate=flushed`; `fence-flush` means a fencer is at work) and:
 * - `fenced`: IPMI confirmed it off after it last ran anything, and any boot since would have
 *   re-registered it (`init`) and changed this state; or
 * - `dead` (the fence failed) with `failed_fence: migrate` and suicide on, silent (as we observed)
 *   for the whole reset wait: it has reset itself and written nothing since — the same rule the
 *   fencer applied before recovering. With `failed_fence: none` a dead node's VMs stay.
 */
export function isRecoverable(n: RetryNodeView, rules: RetryRules): boolean {
  if (n.domainState !== 'flushed') return false;
  if (n.daemonState === 'fenced') return true;
  if (n.daemonState !== 'dead' || rules.failedFence !== 'migrate' || rules.resetWaitMs === undefined) return false;
  return n.silentMs !== undefined && n.silentMs >= rules.resetWaitMs;
}

/** The names of the {@link isRecoverable} nodes. */
export function recoverableNodes(nodes: readonly RetryNodeView[], rules: RetryRules): string[] {
  return nodes.filter((n) => isRecoverable(n, rules)).map((n) => n.name);
}

/** The VM keys that make a VM wait for a target. */
export type WaitingFacts = Pick<VmFacts, 'state' | 'node' | 'autostart' | 'failedReason'>;

/**
 * A VM recovery could not place and that still waits: `stop`, `node_autostart=True`, the
 * no-target `failedreason`, and still assigned to a recoverable node. An operator who stops or
 * moves it, or its node's return and `ready` (vmd starts it and clears the flag), ends the wait.
 */
export function isWaitingVm(vm: WaitingFacts, recoverable: ReadonlySet<string>): boolean {
  return vm.state === 'stop' && vm.autostart && isNoTargetReason(vm.failedReason) && recoverable.has(vm.node);
}

/** A VM already assigned to a target that does not run there yet (its memory is not in the figures). */
export interface PendingVm {
  vm: VmFacts;
  /** The node it is assigned to. */
  node: string;
}

/** Everything one retry decides from. */
export interface RetryInput {
  /** VMs that pass {@link isWaitingVm}; placed in UUID order, as recovery does. */
  waiting: readonly VmFacts[];
  pending: readonly PendingVm[];
  nodes: readonly NodeFacts[];
  /** Raw `/config/migration_target_selector`. */
  selector: string;
}

/** One VM to move: from its dead node to the target. */
export interface RetryMove {
  vm: VmFacts;
  from: string;
  target: string;
}

/** What one retry decided. */
export interface RetryPlan {
  moves: RetryMove[];
  /** VMs that still have no target, with placement's reason. */
  left: { vm: VmFacts; reason: string }[];
}

/**
 * Places the waiting VMs together (`planPlacements`: ten VMs do not land on a node with room for
 * two). The node figures come from keepalives and lag: a VM assigned to a node that does not run
 * it yet (just moved there by recovery or an earlier retry) is counted on it first, so a retry
 * one interval after another does not fill the same memory twice.
 */
export function planRetries(input: RetryInput): RetryPlan {
  let nodes: readonly NodeFacts[] = input.nodes;
  for (const p of input.pending) nodes = withPlacement(nodes, p.node, request(p.vm, p.node));
  const waiting = [...input.waiting].sort((a, b) => (a.uuid < b.uuid ? -1 : a.uuid > b.uuid ? 1 : 0));
  const plan = planPlacements(waiting.map((vm) => request(vm, vm.node)), nodes, input.selector);
  const out: RetryPlan = { moves: [], left: [] };
  for (const [i, vm] of waiting.entries()) {
    const r = plan.placements[i]?.result;
    if (r?.ok === true) out.moves.push({ vm, from: vm.node, target: r.node });
    else out.left.push({ vm, reason: r?.reason ?? 'no plan' });
  }
  return out;
}
