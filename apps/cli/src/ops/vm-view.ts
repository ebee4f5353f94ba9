import { domainKeys, readKeys, type ZkClient } from '@pvc/zk';
import { Problems } from '../problems.js';
import type { CliContext } from '../context.js';
import type { VmRef } from '../lookup.js';
import { stateStyle, type Column, type Format } from '../output.js';
import { readAllVms, readVmSummary, type VmSummary } from './read.js';
import { runningOnNodes } from './vm-status.js';

/** Filters of `pvc vm list`; every given one must match (or, with `negate`, must not). */
export interface VmListFilter {
  /** A piece of the name or UUID (a regular expression, like the original's limit). */
  limit?: string;
  node?: string;
  state?: string;
  tags?: readonly string[];
  negate?: boolean;
}

/** Whether a VM passes the filters. With `negate`, each given filter is inverted (and still all must pass). */
export function matchesFilter(vm: VmSummary, f: VmListFilter, limitRe?: RegExp): boolean {
  const n = f.negate === true;
  const checks: boolean[] = [];
  if (limitRe) checks.push(limitRe.test(vm.name) || limitRe.test(vm.uuid));
  if (f.node !== undefined) checks.push(vm.node === f.node);
  if (f.state !== undefined) checks.push(vm.state === f.state);
  for (const t of f.tags ?? []) checks.push(vm.tags.some((tag) => tag.name === t));
  return checks.every((c) => c !== n);
}

const dash = (v: string | number | null): string => (v === null || v === '' ? '-' : String(v));

/** Columns of `pvc vm list` (like the original's: name, state, node, migrated, resources, tags). */
export const VM_COLUMNS: readonly Column<VmSummary>[] = [
  { header: 'Name', value: (v) => (v.problems.length > 0 ? `${v.name}(!)` : v.name) },
  { header: 'UUID', value: (v) => v.uuid },
  { header: 'State', value: (v) => dash(v.state), style: (v) => stateStyle(v.state) },
  { header: 'Node', value: (v) => dash(v.node) },
  { header: 'Migrated', value: (v) => (v.lastNode === '' ? 'no' : `from ${v.lastNode}`) },
  { header: 'vCPUs', value: (v) => (v.vcpus === null ? '?' : v.vcpus), align: 'right' },
  { header: 'Memory', value: (v) => (v.memoryMiB === null ? '?' : `${v.memoryMiB} MiB`), align: 'right' },
  { header: 'Tags', value: (v) => dash(v.tags.map((t) => t.name).join(',')) },
  { header: 'Autostart', value: (v) => (v.autostart ? 'yes' : 'no') },
];

/** `pvc vm list`: a table (problems of bad data as notes on stderr), names only, or JSON. */
export async function listVms(ctx: CliContext, f: VmListFilter, format: Format, raw: boolean): Promise<void> {
  const { zk } = await ctx.cluster();
  const limitRe = f.limit === undefined ? undefined : limitRegex(f.limit);
  const vms = (await readAllVms(zk)).filter((v) => matchesFilter(v, f, limitRe));
  if (format === 'json') return ctx.output.json(vms);
  if (raw) {
    for (const v of vms) ctx.output.line(v.name);
    return;
  }
  if (vms.length === 0) return ctx.output.note('No VMs match.');
  ctx.output.table(vms, VM_COLUMNS);
  for (const v of vms) for (const p of v.problems) ctx.output.note(`${v.name} (${v.uuid}): ${p}`);
}

function limitRegex(limit: string): RegExp {
  try {
    return new RegExp(limit);
  } catch {
    return new RegExp(limit.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  }
}

/** The parts of the keepalive's `stats` JSON that `vm info` shows. */
export interface VmStatsSummary {
  state: unknown;
  maxMemMiB: number | null;
  liveMemMiB: number | null;
  cpus: number | null;
  cpuTimeS: number | null;
  disks: number;
  nets: number;
  raw: Record<string, unknown>;
}

/**
 * The parts of the decoded `stats` JSON that `vm info` shows: null (never written, or not JSON:
 * the key reader reported that) → null; a JSON value that is not an object → null with a problem.
 */
export function summariseStats(v: unknown, key: string, problems: string[]): VmStatsSummary | null {
  if (v === null || v === undefined) return null;
  if (typeof v !== 'object' || Array.isArray(v)) {
    problems.push(`${key}: expected a JSON object`);
    return null;
  }
  const o = v as Record<string, unknown>;
  const n = (x: unknown, scale = 1): number | null => (typeof x === 'number' && Number.isFinite(x) ? Math.round((x / scale) * 100) / 100 : null);
  return {
    state: o.state ?? null, maxMemMiB: n(o.maxmem, 1024), liveMemMiB: n(o.livemem, 1024), cpus: n(o.cpus),
    cpuTimeS: n(o.cputime, 1e9), disks: Array.isArray(o.disk_stats) ? o.disk_stats.length : 0,
    nets: Array.isArray(o.net_stats) ? o.net_stats.length : 0, raw: o,
  };
}

/** Everything `pvc vm info` shows. */
export interface VmInfo extends VmSummary {
  /** Nodes whose `runningdomains` list the VM. */
  runningOn: string[];
  stats: VmStatsSummary | null;
  consoleLogLines: number;
}

/** Reads one VM for `vm info`. */
export async function readVmInfo(zk: ZkClient, ref: VmRef): Promise<VmInfo> {
  const d = domainKeys(ref.uuid);
  const p = new Problems();
  const [summary, runningOn, [stats, log]] = await Promise.all([readVmSummary(zk, ref), runningOnNodes(zk, ref.uuid), readKeys(zk, [d.stats, d.consoleLog], p.opts)]);
  const problems = [...summary.problems, ...p.list];
  return {
    ...summary, problems, runningOn, stats: summariseStats(stats, d.stats.path, problems),
    consoleLogLines: log === '' ? 0 : log.replace(/\n$/, '').split('\n').length,
  };
}

type Pair = [string, string | number, ReturnType<typeof stateStyle>?];

/** `pvc vm info`: key/value lines (more with `long`), or JSON. */
export async function showVmInfo(ctx: CliContext, ref: VmRef, format: Format, long: boolean): Promise<void> {
  const { zk } = await ctx.cluster();
  const vm = await readVmInfo(zk, ref);
  if (format === 'json') {
    const { stats, ...rest } = vm;
    return ctx.output.json({ ...rest, stats: stats === null ? null : long ? stats : { ...stats, raw: undefined } });
  }
  const pairs: Pair[] = [
    ['Name', vm.name], ['UUID', vm.uuid], ['State', dash(vm.state), stateStyle(vm.state)],
    ['Node', dash(vm.node)], ['Migrated', vm.lastNode === '' ? 'no' : `from ${vm.lastNode}`],
    ['Running on', `${vm.runningOn.length === 0 ? 'no node' : vm.runningOn.join(', ')} (as of the nodes' last keepalives)`],
    ['vCPUs', dash(vm.vcpus)], ['Memory', vm.memoryMiB === null ? '-' : `${vm.memoryMiB} MiB`],
    ['Failed reason', dash(vm.failedReason), vm.failedReason ? 'red' : undefined], ['VNC', dash(vm.vnc)],
    ['Autostart', vm.autostart ? 'yes' : 'no'], ['Node limit', dash(vm.nodeLimit.join(','))],
    ['Node selector', dash(vm.nodeSelector)], ['Migration method', dash(vm.migrationMethod)],
    ['Tags', dash(vm.tags.map((t) => `${t.name}${t.protected ? ' (protected)' : ''}`).join(', '))],
  ];
  if (vm.stats) {
    const s = vm.stats;
    pairs.push(['Live memory', s.liveMemMiB === null ? '-' : `${s.liveMemMiB} of ${dash(s.maxMemMiB)} MiB`],
      ['CPU time', s.cpuTimeS === null ? '-' : `${s.cpuTimeS} s`]);
  }
  if (long) {
    pairs.push(['Max downtime', `${vm.migrationMaxDowntimeMs} ms`],
      ['Profile', dash(vm.profile)], ['MACs', dash(vm.macs.join(', '))],
      ['RBD volumes', dash(vm.rbdList.join(', '))], ['Console log', `${vm.consoleLogLines} lines`]);
    if (vm.stats) pairs.push(['Stats', JSON.stringify(vm.stats.raw)]);
  }
  ctx.output.keyValues(pairs);
  for (const p of vm.problems) ctx.output.line(`${ctx.output.paint('red', 'Problem:')} ${p}`);
}
