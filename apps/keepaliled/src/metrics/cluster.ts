import {
  clusterHealth, DAEMON_STATES, FAULT_STATUSES, NODE_DOMAIN_STATES, VM_STATES, type ClusterMetricsFacts, type NodeMetricsFacts,
} from '@pvc/zk';
import { twoDp, type Samples } from './families.js';
import { nodeNetworkUtilization } from './node.js';
import { osdIn, osdUp } from './storage.js';

/**
 * The cluster-wide summary the primary serves: `pvc_info`, maintenance, health, fault and state
 * counts, object counts (the original's `get_health_metrics`) and the cluster utilization figures
 * (the head of its `get_resource_metrics`). Each state count lists every state of the vocabulary,
 * 0 included, as the original; an object whose state is unknown is not counted in any.
 *
 * @module
 */

function counts(values: readonly (string | undefined)[], vocabulary: readonly string[]): Map<string, number> {
  const m = new Map<string, number>(vocabulary.map((s) => [s, 0]));
  for (const v of values) if (v !== undefined && m.has(v)) m.set(v, (m.get(v) ?? 0) + 1);
  return m;
}

function addCounts(out: Samples, name: string, label: string, m: ReadonlyMap<string, number>): void {
  for (const [state, n] of m) out.add(name, { [label]: state }, n);
}

/** Every value known, else undefined (a cluster figure from partly unknown inputs would be wrong). */
function all<T>(xs: readonly (T | undefined)[]): T[] | undefined {
  return xs.every((x) => x !== undefined) ? (xs as T[]) : undefined;
}

const total = (xs: readonly number[]): number => xs.reduce((s, x) => s + x, 0);

/** The sum of all but the largest (the original's "n-1": one node's capacity held back). */
function nMinusOne(xs: readonly number[]): number {
  return total([...xs].sort((a, b) => a - b).slice(0, -1));
}

const pctOf = (part: number | undefined, whole: number | undefined): number | undefined =>
  part === undefined || whole === undefined || whole <= 0 ? undefined : twoDp((part / whole) * 100);

/** The health set: info, maintenance, health, faults, state counts, object counts. */
export function addClusterHealth(out: Samples, c: ClusterMetricsFacts, version: string): void {
  if (c.primaryNode !== undefined) {
    out.add('pvc_info', { primary_node: c.primaryNode, version, upstream_ip: c.upstreamIp ?? '' }, 1);
  }
  out.add('pvc_cluster_maintenance', {}, c.maintenance === undefined ? undefined : c.maintenance ? 1 : 0);
  const faults = all(c.faults.map((f) => (f.status === undefined || f.delta === undefined ? undefined : { status: f.status, delta: f.delta })));
  out.add('pvc_cluster_health', {}, faults ? clusterHealth(faults) : undefined);
  addCounts(out, 'pvc_cluster_faults', 'status', counts(c.faults.map((f) => f.status), FAULT_STATUSES));
  addCounts(out, 'pvc_node_daemon_states', 'state', counts(c.nodes.map((n) => n.daemonState), DAEMON_STATES));
  addCounts(out, 'pvc_node_domain_states', 'state', counts(c.nodes.map((n) => n.domainState), NODE_DOMAIN_STATES));
  addCounts(out, 'pvc_vm_states', 'state', counts(c.vms.map((v) => v.state), VM_STATES));
  addCounts(out, 'pvc_ceph_osd_up_states', 'state', counts(c.osds.map((o) => (osdUp(o) ? 'up' : 'down')), ['up', 'down']));
  addCounts(out, 'pvc_ceph_osd_in_states', 'state', counts(c.osds.map((o) => (osdIn(o) ? 'in' : 'out')), ['in', 'out']));
  out.add('pvc_nodes', {}, c.nodes.length);
  out.add('pvc_vms', {}, c.vms.length);
  out.add('pvc_osds', {}, c.osds.length);
  out.add('pvc_networks', {}, c.networks);
  out.add('pvc_pools', {}, c.pools.length);
  out.add('pvc_volumes', {}, c.volumes);
  out.add('pvc_snapshots', {}, c.snapshots);
}

function clusterNetwork(nodes: readonly NodeMetricsFacts[]): number | undefined {
  let speed = 0;
  let util = 0;
  let count = 0;
  for (const n of nodes.filter((x) => x.daemonState === 'run')) {
    const u = nodeNetworkUtilization(n.networkStats);
    if (u === undefined) return undefined;
    if (u.speed === 0) continue;
    speed += u.speed;
    util += u.util;
    count += 1;
  }
  return count === 0 ? 0 : pctOf(util / count, speed / count);
}

/** The cluster utilization figures (CPU and memory "n-1": as if the largest node were lost). */
export function addClusterUtilization(out: Samples, c: ClusterMetricsFacts): void {
  const cpus = all(c.nodes.map((n) => n.staticData?.cpuCount));
  const loads = all(c.nodes.map((n) => n.cpuLoad));
  out.add('pvc_cluster_cpu_utilization', {}, cpus && loads ? pctOf(total(loads), nMinusOne(cpus)) : undefined);
  out.add('pvc_cluster_network_utilization', {}, clusterNetwork(c.nodes));
  const mem = all(c.nodes.map((n) => n.memTotalMiB));
  const memTotal = mem === undefined ? undefined : nMinusOne(mem);
  const sumOf = (f: (n: NodeMetricsFacts) => number | undefined): number | undefined => {
    const xs = all(c.nodes.map(f));
    return xs === undefined ? undefined : total(xs);
  };
  out.add('pvc_cluster_memory_real_utilization', {}, pctOf(sumOf((n) => n.memUsedMiB), memTotal));
  out.add('pvc_cluster_memory_allocated_utilization', {}, pctOf(sumOf((n) => n.memAllocMiB), memTotal));
  out.add('pvc_cluster_memory_provisioned_utilization', {}, pctOf(sumOf((n) => n.memProvMiB), memTotal));
  // As the original: the OSDs whose stats carry sizes (one not fully up yet is left out).
  const sized = c.osds.map((o) => o.stats).filter((s) => typeof s?.kb === 'number' && typeof s.kb_used === 'number');
  out.add('pvc_cluster_disk_utilization', {}, pctOf(total(sized.map((s) => Number(s?.kb_used))), total(sized.map((s) => Number(s?.kb)))));
}
