import type { Logger } from '@pvc/runtime';
import { clusterKeys, readClusterMetricsFacts, readKnownKeys, readNodeMetricsFacts, type ZkClient } from '@pvc/zk';
import type { MetricsInput } from './build.js';

/**
 * Reads one scrape's facts from Zookeeper: this node's keys, and the whole tree when
 * `/config/primary_node` names this node (the cluster-wide set comes from the primary only, so
 * a scrape of every node gives each series once).
 */
export async function readMetricsInput(deps: { zk: ZkClient; node: string; version: string; logger: Logger; timeoutMs: number }): Promise<MetricsInput> {
  const opts = { logger: deps.logger, timeoutMs: deps.timeoutMs };
  const [primary] = await readKnownKeys(deps.zk, [clusterKeys.primaryNode], opts);
  if (primary !== deps.node) {
    return { node: await readNodeMetricsFacts(deps.zk, deps.node, opts), version: deps.version };
  }
  const cluster = await readClusterMetricsFacts(deps.zk, opts);
  return { node: cluster.nodes.find((n) => n.name === deps.node), cluster, version: deps.version };
}
