import { clusterHealth, clusterKeys, readKeys, type ZkClient } from '@pvc/zk';
import { Problems } from '../problems.js';
import { byHealthImpact, readFaults, type Fault } from './faults.js';
import { readAllNodes, readAllVms, type NodeSummary } from './read.js';

/** What `pvc cluster status` shows. */
export interface ClusterStatus {
  name: string;
  schemaVersion: number;
  /** `/config/maintenance` read as the original's node daemon does (strtobool: true/yes/on/1, any case). */
  maintenance: boolean;
  primaryNode: string;
  upstreamIp: string;
  /** 0–100: 100 minus the deltas of the stored faults that are not acknowledged (inventory §9). */
  health: number;
  nodes: { total: number; daemonStates: Record<string, number>; coordinatorStates: Record<string, number>; domainStates: Record<string, number>; list: NodeSummary[] };
  vms: { total: number; states: Record<string, number> };
  memory: { totalMiB: number; usedMiB: number; allocMiB: number; provMiB: number };
  /** The faults stored under `/faults`, by delta then last report (acknowledged ones at 0, last). */
  faults: Fault[];
  /** Bad values of the cluster's own keys. */
  problems: string[];
}

function countBy<T>(items: readonly T[], key: (t: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const i of items) out[key(i) || '(empty)'] = (out[key(i) || '(empty)'] ?? 0) + 1;
  return out;
}

/**
 * Reads everything `cluster status` shows. The faults are the ones stored under `/faults`
 * (keepaliled on the primary writes them, as the original's health daemon does); nothing is
 * evaluated here.
 */
export async function readClusterStatus(zk: ZkClient): Promise<ClusterStatus> {
  const c = clusterKeys;
  const p = new Problems();
  const [[name, version, maintenance, primary, upstream], nodes, vms, faults] = await Promise.all([
    readKeys(zk, [c.name, c.schemaVersion, c.maintenance, c.primaryNode, c.upstreamIp], p.opts),
    readAllNodes(zk, false), readAllVms(zk), readFaults(zk),
  ]);
  const sum = (f: (n: NodeSummary) => number): number => nodes.reduce((s, n) => s + f(n), 0);
  return {
    name, schemaVersion: version, maintenance, primaryNode: primary, upstreamIp: upstream,
    health: clusterHealth(faults),
    nodes: {
      total: nodes.length, daemonStates: countBy(nodes, (n) => n.daemonState), coordinatorStates: countBy(nodes, (n) => n.routerState),
      domainStates: countBy(nodes, (n) => n.domainState), list: nodes,
    },
    vms: { total: vms.length, states: countBy(vms, (v) => v.state) },
    memory: { totalMiB: sum((n) => n.memory.totalMiB), usedMiB: sum((n) => n.memory.usedMiB), allocMiB: sum((n) => n.memory.allocMiB), provMiB: sum((n) => n.memory.provMiB) },
    faults: [...faults].sort(byHealthImpact),
    problems: p.list,
  };
}
