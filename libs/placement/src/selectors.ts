import { byName } from './node-limit.js';
import type { NodeFacts, Selector, SelectorSource } from './types.js';

/** Every known selector, in the order the original documents them. */
export const SELECTORS: readonly Selector[] = Object.freeze(['mem', 'memprov', 'vcpus', 'load', 'vms']);

/** Type guard: `value` is one of `SELECTORS` (exact, case-sensitive, as the original compares). */
export function isSelector(value: unknown): value is Selector {
  return typeof value === 'string' && (SELECTORS as readonly string[]).includes(value);
}

/** VM `node_selector` values that defer to the cluster selector. */
const DEFER = new Set(['', 'none', 'None']);

/** The effective selector, or why there is none. */
export type ResolvedSelector =
  | { readonly ok: true; readonly selector: Selector; readonly source: SelectorSource }
  | { readonly ok: false; readonly reason: string };

/**
 * Picks the effective selector: the VM's, unless it is absent, empty, `none` or `None`, in which
 * case the cluster's. An unknown value at either level is an error, never a silent default; an
 * unknown VM selector does not fall back to the cluster one (the original returns no target too).
 */
export function resolveSelector(vmSelector: string | undefined, clusterSelector: string): ResolvedSelector {
  if (vmSelector !== undefined && !DEFER.has(vmSelector)) {
    if (isSelector(vmSelector)) return { ok: true, selector: vmSelector, source: 'vm' };
    return { ok: false, reason: `unknown VM node_selector ${JSON.stringify(vmSelector)}; expected one of ${SELECTORS.join(', ')}` };
  }
  if (isSelector(clusterSelector)) return { ok: true, selector: clusterSelector, source: 'cluster' };
  return {
    ok: false,
    reason: `unknown cluster migration_target_selector ${JSON.stringify(clusterSelector)}; expected one of ${SELECTORS.join(', ')}`,
  };
}

/** How one selector ranks nodes. */
export interface SelectorRule {
  /** The figure compared between nodes. */
  readonly metric: (node: NodeFacts) => number;
  /** `max`: the largest metric wins; `min`: the smallest. */
  readonly pick: 'max' | 'min';
  /** Phrase for the success reason, e.g. `the most free memory`. */
  readonly describe: (value: number) => string;
  /** The node fields the metric reads; a non-finite one makes the node ineligible. */
  readonly fields: readonly (keyof NodeFacts)[];
}

/** Provisioned headroom as the original computes it: (memused + memfree) − memprov. */
export function provisionedHeadroomMiB(node: NodeFacts): number {
  return node.memUsedMiB + node.memFreeMiB - node.memProvMiB;
}

/** The ranking rule of each selector (see the inventory §6 table). */
export const SELECTOR_RULES: Readonly<Record<Selector, SelectorRule>> = Object.freeze({
  mem: {
    metric: (n: NodeFacts) => n.memFreeMiB,
    pick: 'max',
    describe: (v: number) => `the most free memory (${v} MiB)`,
    fields: ['memFreeMiB'],
  },
  memprov: {
    metric: provisionedHeadroomMiB,
    pick: 'max',
    describe: (v: number) => `the most provisioned headroom (${v} MiB)`,
    fields: ['memUsedMiB', 'memFreeMiB', 'memProvMiB'],
  },
  vcpus: {
    metric: (n: NodeFacts) => n.vcpuAlloc,
    pick: 'min',
    describe: (v: number) => `the fewest allocated vCPUs (${v})`,
    fields: ['vcpuAlloc'],
  },
  load: {
    metric: (n: NodeFacts) => n.cpuLoad,
    pick: 'min',
    describe: (v: number) => `the lowest CPU load (${v})`,
    fields: ['cpuLoad'],
  },
  vms: {
    metric: (n: NodeFacts) => n.domainsCount,
    pick: 'min',
    describe: (v: number) => `the fewest running VMs (${v})`,
    fields: ['domainsCount'],
  },
} satisfies Record<Selector, SelectorRule>);

/**
 * Orders `nodes` best first for `selector`: by the metric, then by name (code-unit order, not
 * locale), so the result never depends on the input (ZK child) order. Does not filter.
 */
export function rankNodes(nodes: readonly NodeFacts[], selector: Selector): NodeFacts[] {
  const rule = SELECTOR_RULES[selector];
  const sign = rule.pick === 'max' ? -1 : 1;
  return [...nodes].sort((a, b) => {
    const d = sign * (rule.metric(a) - rule.metric(b));
    return d !== 0 ? d : byName(a.name, b.name);
  });
}
