import type { ZkClient } from '@pvc/zk';
import type { CliContext } from '../context.js';
import { refused } from '../errors.js';
import { findNode, listVmRefs, type VmRef } from '../lookup.js';
import { stateStyle, type Column, type Format } from '../output.js';
import { readFlushFailures, type FlushFailure } from './flush-failures.js';
import { readAllNodes, readNodeSummary, type NodeSummary } from './read.js';

/** Filters of `pvc node list` (the original's `--daemon-state`, `--coordinator-state`, `--domain-state`). */
export interface NodeFilters {
  daemonState?: string;
  coordinatorState?: string;
  domainState?: string;
}

/** What `pvc node info` shows: the summary plus the keepalive age, the running VMs by name and the flush failures. */
export interface NodeInfo extends NodeSummary {
  /** Seconds since the last keepalive (by the CLI's clock), or null when there is none. */
  keepaliveAgeS: number | null;
  runningVms: VmRef[];
  /** VMs (node or lastnode this node) whose failedreason says a flush of this node could not move them. */
  flushFailures: FlushFailure[];
}

/** Memory in GiB with one decimal, `-` when unknown. */
export function gib(mib: number | null): string {
  return mib === null ? '-' : `${(mib / 1024).toFixed(1)}G`;
}

const dash = (v: number | null, suffix = ''): string => (v === null ? '-' : `${v}${suffix}`);

/** Health style: green ≥ 90, yellow ≥ 50, red below; none when unknown. */
export function healthStyle(h: number | null): 'green' | 'yellow' | 'red' | undefined {
  if (h === null) return undefined;
  return h >= 90 ? 'green' : h >= 50 ? 'yellow' : 'red';
}

/** Whether a node passes the list filters. */
export function matchesFilters(n: NodeSummary, f: NodeFilters): boolean {
  return (f.daemonState === undefined || n.daemonState === f.daemonState)
    && (f.coordinatorState === undefined || n.routerState === f.coordinatorState)
    && (f.domainState === undefined || n.domainState === f.domainState);
}

const LIST_COLUMNS: readonly Column<NodeSummary>[] = [
  { header: 'Name', value: (n) => n.name },
  { header: 'Mode', value: (n) => n.mode },
  { header: 'Daemon', value: (n) => n.daemonState, style: (n) => stateStyle(n.daemonState) },
  { header: 'Coordinator', value: (n) => n.routerState, style: (n) => stateStyle(n.routerState) },
  { header: 'Domain', value: (n) => n.domainState, style: (n) => stateStyle(n.domainState) },
  { header: 'Health', value: (n) => dash(n.health, '%'), style: (n) => healthStyle(n.health), align: 'right' },
  { header: 'VMs', value: (n) => n.runningDomains.length, align: 'right' },
  { header: 'Load', value: (n) => dash(n.load), align: 'right' },
  { header: 'vCPUs', value: (n) => `${dash(n.vcpuAlloc)}/${dash(n.cpus)}`, align: 'right' },
  { header: 'Mem total', value: (n) => gib(n.memory.totalMiB), align: 'right' },
  { header: 'Used', value: (n) => gib(n.memory.usedMiB), align: 'right' },
  { header: 'Free', value: (n) => gib(n.memory.freeMiB), align: 'right' },
  { header: 'Alloc', value: (n) => gib(n.memory.allocMiB), align: 'right' },
  { header: 'Prov', value: (n) => gib(n.memory.provMiB), align: 'right' },
  { header: 'Version', value: (n) => n.pvcVersion },
];

/** `pvc node list`: a table (or JSON) of every node passing the filters. */
export async function showNodeList(ctx: CliContext, format: Format, filters: NodeFilters): Promise<void> {
  const { zk } = await ctx.cluster();
  const nodes = (await readAllNodes(zk, format === 'json')).filter((n) => matchesFilters(n, filters));
  if (format === 'json') return ctx.output.json(nodes);
  if (nodes.length === 0) return ctx.output.note('No nodes found');
  ctx.output.table(nodes, LIST_COLUMNS);
  for (const n of nodes) for (const p of n.problems) ctx.output.note(`${n.name}: ${p}`);
}

const FLUSH_FAILURE_COLUMNS: readonly Column<FlushFailure>[] = [
  { header: 'Not moved', value: (v) => v.name },
  { header: 'State', value: (v) => v.state, style: (v) => stateStyle(v.state) },
  { header: 'Node', value: (v) => v.node },
  { header: 'Failed reason', value: (v) => v.reason, style: () => 'red' },
];

/** Reads what `pvc node info` shows (the node must exist). */
export async function readNodeInfo(zk: ZkClient, name: string, nowMs: number): Promise<NodeInfo> {
  const node = await findNode(zk, name);
  const s = await readNodeSummary(zk, node);
  if (!s) throw refused(`node ${node} disappeared while being read`);
  const [refs, flushFailures] = await Promise.all([listVmRefs(zk), readFlushFailures(zk, node)]);
  const runningVms = s.runningDomains.map((uuid) => refs.find((r) => r.uuid === uuid) ?? { uuid, name: '(unknown VM)' });
  const keepaliveAgeS = s.keepalive === null ? null : Math.max(0, Math.round(nowMs / 1000 - s.keepalive));
  return { ...s, keepaliveAgeS, runningVms, flushFailures };
}

/**
 * `pvc node info <node>`: key/value lines, the running VMs, the VMs a flush of the node could not
 * move (a table with each one's failedreason), and with `long` every health plugin.
 */
export async function showNodeInfo(ctx: CliContext, name: string, format: Format, long: boolean): Promise<void> {
  const { zk } = await ctx.cluster();
  const n = await readNodeInfo(zk, name, ctx.io.clock.now());
  if (format === 'json') return ctx.output.json(n);
  const m = n.memory;
  const kv: [string, string | number, ReturnType<typeof stateStyle>?][] = [
    ['Name', n.name],
    ['Mode', n.mode],
    ['PVC version', n.pvcVersion || '-'],
    ['Daemon state', n.daemonState, stateStyle(n.daemonState)],
    ['Coordinator state', n.routerState, stateStyle(n.routerState)],
    ['Domain state', n.domainState, stateStyle(n.domainState)],
    ['Health', dash(n.health, '%'), healthStyle(n.health)],
    ['Last keepalive', n.keepaliveAgeS === null ? 'never' : `${n.keepaliveAgeS} s ago`],
    ['Kernel / OS / arch', [n.kernel, n.os, n.arch].map((x) => x || '-').join(' / ')],
    ['CPUs', `${dash(n.cpus)} (vCPUs allocated: ${dash(n.vcpuAlloc)}, load: ${dash(n.load)})`],
    ['Memory', `${gib(m.totalMiB)} total, ${gib(m.usedMiB)} used, ${gib(m.freeMiB)} free, ${gib(m.allocMiB)} allocated, ${gib(m.provMiB)} provisioned`],
    ['Running VMs', n.runningVms.length === 0 ? 'none' : `${n.runningVms.length}: ${n.runningVms.map((v) => v.name).join(', ')}`],
    ['VMs counted', dash(n.domainsCount)],
    ['Flush failures', n.flushFailures.length === 0 ? 'none' : `${n.flushFailures.length}: ${n.flushFailures.map((v) => v.name).join(', ')}`, n.flushFailures.length > 0 ? 'red' : undefined],
    ['IPMI host', n.ipmiHostname || '-'],
    ['Health plugins', long || n.plugins.length === 0 ? String(n.plugins.length) : `${n.plugins.length} (--long shows them)`],
  ];
  ctx.output.keyValues(kv);
  if (n.flushFailures.length > 0) {
    ctx.output.line();
    ctx.output.table(n.flushFailures, FLUSH_FAILURE_COLUMNS);
  }
  if (long && n.plugins.length > 0) {
    ctx.output.line();
    ctx.output.table(n.plugins, [
      { header: 'Plugin', value: (p) => p.name },
      { header: 'Delta', value: (p) => p.delta, style: (p) => (p.delta > 0 ? 'yellow' : undefined), align: 'right' },
      { header: 'Message', value: (p) => p.message },
    ]);
  }
  for (const p of n.problems) ctx.output.note(p);
}
