import { paths, type ZkClient } from '@pvc/zk';
import { readAllNodes, readAllVms, type NodeSummary, type VmSummary } from './read.js';

/** A fault: stored under `/faults` (by a health daemon) or seen now in the tree (`live`). */
export interface Fault {
  id: string;
  source: 'stored' | 'live';
  status: string;
  delta: number;
  message: string;
  lastTime: string;
}

/** What `pvc cluster status` shows. */
export interface ClusterStatus {
  name: string;
  schemaVersion: string;
  maintenance: boolean;
  primaryNode: string;
  upstreamIp: string;
  /** 0–100: 100 minus the deltas of every fault that is not acknowledged. */
  health: number;
  nodes: { total: number; daemonStates: Record<string, number>; coordinatorStates: Record<string, number>; domainStates: Record<string, number>; list: NodeSummary[] };
  vms: { total: number; states: Record<string, number> };
  memory: { totalMiB: number; usedMiB: number; allocMiB: number; provMiB: number };
  faults: Fault[];
}

function countBy<T>(items: readonly T[], key: (t: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const i of items) out[key(i) || '(empty)'] = (out[key(i) || '(empty)'] ?? 0) + 1;
  return out;
}

/** The faults stored under `/faults/<id>`. */
async function storedFaults(zk: ZkClient): Promise<Fault[]> {
  const ids = await zk.children(paths.faults.root).catch(() => [] as string[]);
  return Promise.all(
    ids.map(async (id) => {
      const f = paths.faults.fault(id);
      const [status, delta, message, last] = await Promise.all([f.status, f.delta, f.message, f.lastTime].map((p) => zk.read(p)));
      const d = Number(delta);
      return { id, source: 'stored' as const, status: status ?? 'new', delta: Number.isFinite(d) ? d : 0, message: message ?? '', lastTime: last ?? '' };
    }),
  );
}

/**
 * The original health daemon's cluster fault conditions (inventory §9), evaluated on the tree as it
 * is now: dead/fenced nodes, failed VMs, memory overprovisioning and unhealthy plugins. Nothing is
 * written; a fault the health daemon already stored is shown once, as stored.
 */
export function liveFaults(nodes: readonly NodeSummary[], vms: readonly VmSummary[]): Fault[] {
  const out: Fault[] = [];
  const add = (id: string, delta: number, message: string): void => {
    out.push({ id: id.toUpperCase(), source: 'live', status: 'new', delta, message, lastTime: '' });
  };
  for (const n of nodes) {
    if (n.daemonState === 'dead' || n.daemonState === 'fenced') add(`DEAD_NODE_${n.name}`, 50, `Node ${n.name} was dead and/or fenced`);
    for (const p of n.plugins) {
      if (p.delta !== null && p.delta > 0) add(`NODE_PLUGIN_${p.name}_${n.name}`, Math.trunc(p.delta / 2), `Node ${n.name} plugin ${p.name}: ${p.message}`);
    }
  }
  for (const v of vms) if (v.state === 'fail') add(`VM_FAILED_${v.name}`, 10, `VM ${v.name} was failed: ${v.failedReason || 'no reason recorded'}`);
  const totals = nodes.map((n) => n.memory.totalMiB ?? 0);
  const alloc = nodes.reduce((s, n) => s + (n.memory.allocMiB ?? 0), 0);
  const spare = totals.reduce((s, t) => s + t, 0) - Math.max(0, ...totals);
  if (nodes.length > 1 && alloc > 0 && alloc >= spare) {
    add('MEMORY_OVERPROVISIONED', 50, `Cluster memory was overprovisioned: ${alloc} MiB allocated, ${spare} MiB left after losing the largest node`);
  }
  return out;
}

/** Reads everything `cluster status` shows. */
export async function readClusterStatus(zk: ZkClient): Promise<ClusterStatus> {
  const c = paths.config;
  const [name, version, maintenance, primary, upstream] = await Promise.all(
    [c.root, paths.schema.version, c.maintenance, c.primaryNode, c.upstreamIp].map((p) => zk.read(p)),
  );
  const [nodes, vms, stored] = await Promise.all([readAllNodes(zk), readAllVms(zk), storedFaults(zk)]);
  const inMaintenance = (maintenance ?? '').toLowerCase() === 'true';
  const storedIds = new Set(stored.map((f) => f.id));
  const live = inMaintenance ? [] : liveFaults(nodes, vms).filter((f) => !storedIds.has(f.id));
  const faults = [...stored, ...live].sort((a, b) => b.delta - a.delta || a.id.localeCompare(b.id));
  const penalty = faults.filter((f) => f.status !== 'ack').reduce((s, f) => s + f.delta, 0);
  const sum = (f: (n: NodeSummary) => number | null): number => nodes.reduce((s, n) => s + (f(n) ?? 0), 0);
  return {
    name: name ?? '', schemaVersion: version ?? '', maintenance: inMaintenance, primaryNode: primary ?? 'none', upstreamIp: upstream ?? '',
    health: Math.max(0, 100 - penalty),
    nodes: {
      total: nodes.length, daemonStates: countBy(nodes, (n) => n.daemonState), coordinatorStates: countBy(nodes, (n) => n.routerState),
      domainStates: countBy(nodes, (n) => n.domainState), list: nodes,
    },
    vms: { total: vms.length, states: countBy(vms, (v) => v.state) },
    memory: { totalMiB: sum((n) => n.memory.totalMiB), usedMiB: sum((n) => n.memory.usedMiB), allocMiB: sum((n) => n.memory.allocMiB), provMiB: sum((n) => n.memory.provMiB) },
    faults,
  };
}

