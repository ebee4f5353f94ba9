import { SELECTOR_RULES, provisionedHeadroomMiB } from './selectors.js';
import type { NodeFacts, Selector, VmRequest } from './types.js';

/** The only `daemonstate` a target may have. */
export const ELIGIBLE_DAEMON_STATE = 'run';
/** The only `domainstate` a target may have. */
export const ELIGIBLE_DOMAIN_STATE = 'ready';

/** What one node is checked against. */
export interface EligibilityContext {
  readonly vm: VmRequest;
  readonly selector: Selector;
  /** Nodes never chosen besides the VM's current node. */
  readonly exclude: ReadonlySet<string>;
  /** Allowed names, or null for no limit. */
  readonly allowed: ReadonlySet<string> | null;
}

/**
 * Why `node` cannot take the VM, or null when it can. Checks run in a fixed order and the first
 * failing one is reported: current node, exclusion, node_limit, daemon state, domain state,
 * networks, unreadable figures, then fit. Networks (ours; the original never checks): when the
 * node's networks are known, every VNI of the VM must be among them (the missing ones are named:
 * `lacks network 1100 (vmbr1100)`); a node whose networks are unknown is not checked. Fit (which the
 * original never checks either) means memfree ≥ VM memory; for `memprov` also
 * (memused + memfree − memprov) ≥ VM memory; and, when the node's CPU count is known, vCPUs ≤
 * that count.
 */
export function whyIneligible(node: NodeFacts, ctx: EligibilityContext): string | null {
  if (node.name === ctx.vm.currentNode) return 'current node of the VM';
  if (ctx.exclude.has(node.name)) return 'excluded';
  if (ctx.allowed !== null && !ctx.allowed.has(node.name)) return 'not in node_limit';
  if (node.daemonState !== ELIGIBLE_DAEMON_STATE) return `daemon state ${node.daemonState}`;
  if (node.domainState !== ELIGIBLE_DOMAIN_STATE) return `domain state ${node.domainState}`;
  return whyLacksNetwork(node, ctx.vm) ?? whyUnreadable(node, ctx.selector) ?? whyNoFit(node, ctx.vm, ctx.selector);
}

/** The VNIs the VM needs that the node does not have up, ascending; null when it has all or is unknown. */
function whyLacksNetwork(node: NodeFacts, vm: VmRequest): string | null {
  const have = node.networks;
  if (have === undefined || vm.networks === undefined) return null;
  const missing = [...new Set(vm.networks.filter((vni) => !have.has(vni)))].sort((a, b) => a - b);
  if (missing.length === 0) return null;
  return `lacks network${missing.length === 1 ? '' : 's'} ${missing.map((vni) => `${vni} (vmbr${vni})`).join(', ')}`;
}

/** A figure the check needs that is not a finite number (e.g. `"None"` parsed as NaN). */
function whyUnreadable(node: NodeFacts, selector: Selector): string | null {
  const fields = new Set<keyof NodeFacts>(['memFreeMiB', ...SELECTOR_RULES[selector].fields]);
  for (const field of fields) {
    const value = node[field];
    if (typeof value !== 'number' || !Number.isFinite(value)) return `${field} is not a number (${String(value)})`;
  }
  if (node.staticCpus !== undefined && !Number.isFinite(node.staticCpus)) {
    return `staticCpus is not a number (${String(node.staticCpus)})`;
  }
  return null;
}

/** The fit rules; figures are known to be finite here. */
function whyNoFit(node: NodeFacts, vm: VmRequest, selector: Selector): string | null {
  if (node.memFreeMiB < vm.memoryMiB) return `${node.memFreeMiB} MiB free < ${vm.memoryMiB} MiB needed`;
  if (selector === 'memprov') {
    const headroom = provisionedHeadroomMiB(node);
    if (headroom < vm.memoryMiB) return `${headroom} MiB provisioned headroom < ${vm.memoryMiB} MiB needed`;
  }
  if (node.staticCpus !== undefined && node.staticCpus < vm.vcpus) {
    return `${node.staticCpus} host CPUs < ${vm.vcpus} vCPUs needed`;
  }
  return null;
}
