import type { NicStats, NodeMetricsFacts } from '@pvc/zk';
import { twoDp, type Samples } from './families.js';

/**
 * One node's figures (`pvc_node_*`), served by that node's keepaliled. The formulas are the
 * original's `get_resource_metrics`; a figure whose input key is absent or unreadable has no
 * sample (the original printed 0), and a ratio whose divisor is 0 has none either.
 *
 * @module
 */

const pct = (part: number | undefined, whole: number | undefined): number | undefined =>
  part === undefined || whole === undefined || whole <= 0 ? undefined : (part / whole) * 100;

const sum = (nics: readonly NicStats[], f: (n: NicStats) => number): number => nics.reduce((s, n) => s + f(n), 0);

/**
 * The original's per-node network utilization: over the NICs that are up, the mean of
 * `total_bps` over the mean full-duplex speed (`link_speed × 2`), in percent; 0 when none is up
 * (as the original). Undefined when the stats are unknown or the speeds sum to 0.
 */
export function nodeNetworkUtilization(stats: Readonly<Record<string, NicStats>> | undefined): { util: number; speed: number } | undefined {
  if (stats === undefined) return undefined;
  const up = Object.values(stats).filter((n) => n.state === 'up');
  if (up.length === 0) return { util: 0, speed: 0 };
  const speed = sum(up, (n) => n.link_speed * 2) / up.length;
  const util = sum(up, (n) => n.total_bps) / up.length;
  return speed > 0 ? { util, speed } : undefined;
}

/** Adds `pvc_node_health` and every `pvc_node_*` resource figure of `n`. */
export function addNodeMetrics(out: Samples, n: NodeMetricsFacts): void {
  const node = { node: n.name };
  if (typeof n.health === 'number') out.add('pvc_node_health', node, n.health);
  const cpus = n.staticData?.cpuCount;
  out.add('pvc_node_host_cpus', node, cpus);
  out.add('pvc_node_allocated_vcpus', node, n.vcpuAlloc);
  out.add('pvc_node_load_average', node, n.cpuLoad);
  out.add('pvc_node_cpu_utilization', node, twoDp(pct(n.cpuLoad, cpus)));
  out.add('pvc_node_domains_count', node, n.domainsCount);
  if (n.staticData) {
    out.add('pvc_node_architecture', { ...node, architecture: n.staticData.arch }, 1);
    out.add('pvc_node_kernel', { ...node, kernel: n.staticData.kernel }, 1);
  }
  const nics = n.networkStats === undefined ? undefined : Object.values(n.networkStats);
  if (nics) {
    out.add('pvc_node_network_traffic_rx', node, twoDp(sum(nics, (x) => x.rx_bps)));
    out.add('pvc_node_network_traffic_tx', node, twoDp(sum(nics, (x) => x.tx_bps)));
    out.add('pvc_node_network_packets_rx', node, twoDp(sum(nics, (x) => x.rx_pps)));
    out.add('pvc_node_network_packets_tx', node, twoDp(sum(nics, (x) => x.tx_pps)));
  }
  const net = nodeNetworkUtilization(n.networkStats);
  // The original counts only nodes in `run` and reports 0 for the others.
  const netPct = n.daemonState === undefined ? undefined : n.daemonState !== 'run' ? 0 : net && (net.speed > 0 ? (net.util / net.speed) * 100 : 0);
  out.add('pvc_node_network_utilization', node, twoDp(netPct));
  out.add('pvc_node_total_memory', node, n.memTotalMiB);
  out.add('pvc_node_allocated_memory', node, n.memAllocMiB);
  out.add('pvc_node_allocated_memory_utilization', node, pct(n.memAllocMiB, n.memTotalMiB));
  out.add('pvc_node_provisioned_memory', node, n.memProvMiB);
  out.add('pvc_node_provisioned_memory_utilization', node, pct(n.memProvMiB, n.memTotalMiB));
  out.add('pvc_node_used_memory', node, n.memUsedMiB);
  out.add('pvc_node_used_memory_utilization', node, pct(n.memUsedMiB, n.memTotalMiB));
  out.add('pvc_node_free_memory', node, n.memFreeMiB);
}
