import { selectTarget } from './select.js';
import type { NodeFacts, PlacementResult, VmRequest } from './types.js';

/** One VM's outcome in a plan. */
export interface VmPlacement {
  readonly vm: string;
  readonly result: PlacementResult;
}

/** Result of `planPlacements`. */
export interface PlacementPlan {
  /** One entry per input VM, in input order. */
  readonly placements: readonly VmPlacement[];
  /** The node figures after every planned move (input order kept); the input is not modified. */
  readonly nodes: readonly NodeFacts[];
}

/**
 * The figures of `nodes` after `vm` lands on `target`: memfree − VM memory, memused + VM memory
 * (so used + free, and hence the memprov headroom base, stays constant), memalloc and memprov
 * + VM memory, vcpualloc + vCPUs, domainscount + 1. cpuload is left alone: the load a VM will add
 * cannot be predicted. The source node is not credited: its memory is only freed when the
 * migration completes, and in a flush or fence the source is ineligible anyway. Returns a new array.
 */
export function withPlacement(nodes: readonly NodeFacts[], target: string, vm: VmRequest): NodeFacts[] {
  return nodes.map((n) =>
    n.name !== target
      ? n
      : {
          ...n,
          memFreeMiB: n.memFreeMiB - vm.memoryMiB,
          memUsedMiB: n.memUsedMiB + vm.memoryMiB,
          memAllocMiB: n.memAllocMiB + vm.memoryMiB,
          memProvMiB: n.memProvMiB + vm.memoryMiB,
          vcpuAlloc: n.vcpuAlloc + vm.vcpus,
          domainsCount: n.domainsCount + 1,
        },
  );
}

/**
 * Places several VMs one after another (a node flush, or fence recovery), in the order given.
 * After each success the chosen node's figures are updated with `withPlacement`, so later VMs see
 * the memory and counts the earlier ones will take: ten VMs are not all sent to the one node that
 * only fits two, and `vcpus`/`vms` selectors spread VMs round-robin-like. With `load`, VMs go to
 * the least-loaded node until it is full (load is not predicted). A VM with no target does not
 * stop the plan; its failure is recorded and the next VM is placed.
 *
 * Contract: pure; the live figures in ZK lag the plan, so callers applying moves one by one may
 * instead call `selectTarget` with fresh facts each time.
 */
export function planPlacements(
  vms: readonly VmRequest[],
  nodes: readonly NodeFacts[],
  clusterSelector: string,
  exclude?: readonly string[],
): PlacementPlan {
  let current: readonly NodeFacts[] = nodes;
  const placements: VmPlacement[] = [];
  for (const vm of vms) {
    const result = selectTarget({ vm, nodes: current, clusterSelector, exclude });
    if (result.ok) current = withPlacement(current, result.node, vm);
    placements.push({ vm: vm.name, result });
  }
  return { placements, nodes: current };
}
