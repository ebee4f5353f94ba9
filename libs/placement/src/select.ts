import { whyIneligible } from './eligibility.js';
import { byName, resolveLimit } from './node-limit.js';
import { SELECTOR_RULES, rankNodes, resolveSelector } from './selectors.js';
import type { NodeFacts, PlacementFailure, PlacementInput, PlacementResult, Rejection, VmRequest } from './types.js';

/**
 * Chooses the node a VM should move to (the original's `findTargetNode`, inventory §6).
 *
 * Contract: pure and deterministic — the same input gives the same result whatever the order of
 * `nodes`. A node is eligible only if it is not the VM's current node, not in `exclude`, inside the
 * VM's node_limit (when non-empty), has daemonstate `run` and domainstate `ready`, has the VM's
 * networks up (when known), and the VM fits (see `whyIneligible`). Among eligible nodes the selector's metric decides, then the node name.
 * Never throws on bad data: unknown selectors, unknown node_limit names and unreadable figures
 * are reported in the result.
 */
export function selectTarget(input: PlacementInput): PlacementResult {
  const { vm, nodes } = input;
  const limit = resolveLimit(vm.nodeLimit, nodes.map((n) => n.name));
  const unknownLimitNodes = limit.unknown;
  const vmProblem = whyInvalidVm(vm);
  if (vmProblem !== null) return failure('INVALID_VM', vmProblem, [], unknownLimitNodes);
  const sel = resolveSelector(vm.selector, input.clusterSelector);
  if (!sel.ok) return failure('UNKNOWN_SELECTOR', sel.reason, [], unknownLimitNodes);

  const ctx = { vm, selector: sel.selector, exclude: new Set(input.exclude ?? []), allowed: limit.allowed };
  const eligible: NodeFacts[] = [];
  const rejected: Rejection[] = [];
  for (const node of nodes) {
    const why = whyIneligible(node, ctx);
    if (why === null) eligible.push(node);
    else rejected.push({ node: node.name, why });
  }
  rejected.sort((a, b) => byName(a.node, b.node));

  const best = rankNodes(eligible, sel.selector)[0];
  if (best === undefined) {
    const reason = rejected.length === 0 ? 'no nodes' : rejected.map((r) => `${r.node}: ${r.why}`).join('; ');
    return failure('NO_ELIGIBLE_NODE', reason, rejected, unknownLimitNodes);
  }
  const rule = SELECTOR_RULES[sel.selector];
  const of = eligible.length === 1 ? 'the only eligible node' : `${eligible.length} eligible nodes`;
  return {
    ok: true,
    node: best.name,
    selector: sel.selector,
    selectorSource: sel.source,
    reason: `${best.name} has ${rule.describe(rule.metric(best))} of ${of}`,
    rejected,
    unknownLimitNodes,
  };
}

/** The VM's own figures must make sense before any node is judged against them. */
function whyInvalidVm(vm: VmRequest): string | null {
  if (!Number.isFinite(vm.memoryMiB) || vm.memoryMiB <= 0) {
    return `VM ${vm.name}: memoryMiB must be a positive number, got ${String(vm.memoryMiB)}`;
  }
  if (!Number.isFinite(vm.vcpus) || vm.vcpus < 0) {
    return `VM ${vm.name}: vcpus must be a number ≥ 0, got ${String(vm.vcpus)}`;
  }
  return null;
}

function failure(
  code: PlacementFailure['code'],
  reason: string,
  rejected: readonly Rejection[],
  unknownLimitNodes: readonly string[],
): PlacementFailure {
  return { ok: false, code, reason, rejected, unknownLimitNodes };
}
