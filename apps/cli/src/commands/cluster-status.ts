import type { CliContext } from '../context.js';
import type { Column, Format } from '../output.js';
import { stateStyle } from '../output.js';
import type { Fault } from '../ops/faults.js';
import { readClusterStatus } from '../ops/status.js';

const counts = (c: Record<string, number>): string =>
  Object.entries(c).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${v} ${k}`).join(', ') || 'none';

const gib = (mib: number): string => `${(mib / 1024).toFixed(1)} GiB`;

/** Prints `pvc cluster status`. */
export async function showStatus(ctx: CliContext, format: Format): Promise<void> {
  const { zk, connection } = await ctx.cluster();
  const s = await readClusterStatus(zk);
  if (format === 'json') return ctx.output.json(s);
  const out = ctx.output;
  const healthStyle = s.health >= 90 ? 'green' : s.health >= 50 ? 'yellow' : 'red';
  out.keyValues([
    ['Cluster', `${s.name || '(unnamed)'} via ${connection.hosts.join(',')}`],
    ['Health', `${s.health}%${s.maintenance ? ' (maintenance on)' : ''}`, s.maintenance ? 'blue' : healthStyle],
    ['Primary node', s.primaryNode, s.primaryNode === 'none' ? 'red' : undefined],
    ['Nodes', `${s.nodes.total}: ${counts(s.nodes.daemonStates)}; ${counts(s.nodes.domainStates)}`],
    ['VMs', `${s.vms.total}: ${counts(s.vms.states)}`],
    ['Memory', `${gib(s.memory.totalMiB)} total, ${gib(s.memory.usedMiB)} used, ${gib(s.memory.allocMiB)} allocated to VMs`],
  ]);
  if (s.nodes.list.length > 0) {
    out.line();
    out.table(s.nodes.list, [
      { header: 'Node', value: (n) => n.name },
      { header: 'Daemon', value: (n) => n.daemonState, style: (n) => stateStyle(n.daemonState) },
      { header: 'Coordinator', value: (n) => n.routerState, style: (n) => stateStyle(n.routerState) },
      { header: 'Domain', value: (n) => n.domainState, style: (n) => stateStyle(n.domainState) },
      { header: 'Health', value: (n) => (n.health === null ? '-' : `${n.health}%`), align: 'right' },
      { header: 'VMs', value: (n) => n.runningDomains.length, align: 'right' },
    ]);
  }
  out.line();
  if (s.faults.length === 0) out.line('Faults: none');
  else out.table(s.faults, FAULT_COLUMNS);
  for (const p of s.problems) out.note(p);
  for (const n of s.nodes.list) for (const p of n.problems) out.note(`node ${n.name}: ${p}`);
  for (const f of s.faults) for (const p of f.problems) out.note(`fault ${f.id}: ${p}`);
}

/** The fault table of `cluster status` and `cluster fault list` (`long` adds first report and acknowledgement). */
export function faultColumns(long: boolean): Column<Fault>[] {
  return [
    { header: 'ID', value: (f) => f.id },
    { header: 'Status', value: (f) => f.status, style: (f) => (f.status === 'ack' ? undefined : f.delta >= 50 ? 'red' : 'yellow') },
    { header: 'Delta', value: (f) => f.delta, align: 'right' },
    ...(long ? [{ header: 'First reported', value: (f: Fault) => f.firstReported || '-' }] : []),
    { header: 'Last reported', value: (f) => f.lastReported || '-' },
    ...(long ? [{ header: 'Acknowledged', value: (f: Fault) => f.acknowledgedAt || '-' }] : []),
    { header: 'Message', value: (f) => f.message },
  ];
}

const FAULT_COLUMNS = faultColumns(false);
