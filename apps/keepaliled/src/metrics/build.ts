import { Gauge, Registry } from 'prom-client';
import type { ClusterMetricsFacts, NodeMetricsFacts } from '@pvc/zk';
import { addClusterHealth, addClusterUtilization } from './cluster.js';
import { FAMILIES, Samples, type MetricGroup, type Sample } from './families.js';
import { addNodeMetrics } from './node.js';
import { addOsdMetrics, addPoolMetrics } from './storage.js';
import { addVmMetrics } from './vm.js';

/**
 * The pure builder: facts read from Zookeeper in, Prometheus text out. Each node serves its own
 * node's figures; the primary coordinator also serves the cluster-wide set (summary, utilization,
 * VMs, OSDs, pools). Summed over every node's endpoint that is the original's one `/metrics`,
 * without the same series coming from two targets.
 *
 * @module
 */

/** What one scrape is built from. */
export interface MetricsInput {
  /** This node's facts; undefined when its keys do not exist. */
  node?: NodeMetricsFacts | undefined;
  /** The whole tree; only on the primary. */
  cluster?: ClusterMetricsFacts | undefined;
  /** Our version, for `pvc_info`'s `version` label. */
  version: string;
}

/** Every sample of one scrape, in no particular order. */
export function buildSamples(input: MetricsInput): Sample[] {
  const out = new Samples();
  const c = input.cluster;
  if (c) {
    addClusterHealth(out, c, input.version);
    addClusterUtilization(out, c);
  }
  if (input.node) addNodeMetrics(out, input.node);
  if (c) {
    for (const vm of c.vms) addVmMetrics(out, vm);
    for (const osd of c.osds) addOsdMetrics(out, osd);
    for (const pool of c.pools) addPoolMetrics(out, pool);
  }
  return out.list;
}

/**
 * The text exposition (format 0.0.4) of `samples`, in the original's family order, only the
 * families of `group` when given. A family without samples is left out whole.
 */
export async function exposition(samples: readonly Sample[], group?: MetricGroup): Promise<string> {
  const byName = new Map<string, Sample[]>();
  for (const s of samples) {
    const list = byName.get(s.name);
    if (list) list.push(s);
    else byName.set(s.name, [s]);
  }
  const registry = new Registry();
  for (const [name, family] of FAMILIES) {
    const list = byName.get(name);
    if (list === undefined || (group !== undefined && family.group !== group)) continue;
    const labelNames = [...new Set(list.flatMap((s) => Object.keys(s.labels)))];
    const gauge = new Gauge({ name, help: family.help, labelNames, registers: [registry] });
    for (const s of list) gauge.set(s.labels, s.value);
  }
  return registry.metrics();
}

/** Prometheus's text content type for {@link exposition}. */
export const EXPOSITION_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;
