import type { Logger } from '@pvc/runtime';
import type { StaticData } from './codec.js';
import { osdKeys, poolKeys, snapshotPoolKeys, snapshotVolumeKeys, volumePoolKeys } from './ceph-keys.js';
import type { StoredOsdStats, StoredPoolStats } from './ceph-stats.js';
import { isZkError } from './errors.js';
import { readKnownKeys, type KeyReadOptions } from './key-read.js';
import { clusterKeys, faultKeys, nodeKeys } from './keys.js';
import { readVmMetricsFacts, type VmMetricsFacts } from './metrics-vm.js';
import { paths } from './schema.js';
import type { ZkClient } from './types.js';
import type { DaemonState, FaultStatus, NodeDomainState, RouterState } from './vocab.js';

export type { VmMetricsFacts } from './metrics-vm.js';

/**
 * What the Prometheus metrics are built from (keepaliled), read from the tree the way the
 * original's API reads it for `/metrics`. Every value goes through its key's codec; unlike the
 * other readers, a value that is absent, empty or bad is `undefined` (bad ones logged once,
 * naming the key) — never the key's default — so a metric built from it has no sample instead of
 * a wrong number.
 *
 * @module
 */

/** One physical NIC of a node's `network_stats` (the original's keepalive fields). */
export interface NicStats {
  rx_bps: number;
  tx_bps: number;
  rx_pps: number;
  tx_pps: number;
  total_bps: number;
  link_speed: number;
  state: string;
}

/** One node's keys as the metrics use them; `undefined` = absent or unreadable. */
export interface NodeMetricsFacts {
  name: string;
  daemonState?: DaemonState | undefined;
  domainState?: NodeDomainState | undefined;
  routerState?: RouterState | undefined;
  /** `monitoring_health`: 0–100; null = `None` (no health known). */
  health?: number | null | undefined;
  staticData?: StaticData | undefined;
  cpuLoad?: number | undefined;
  vcpuAlloc?: number | undefined;
  domainsCount?: number | undefined;
  memTotalMiB?: number | undefined;
  memUsedMiB?: number | undefined;
  memFreeMiB?: number | undefined;
  memAllocMiB?: number | undefined;
  memProvMiB?: number | undefined;
  /** Physical NICs by name; undefined when the value is not the original's shape. */
  networkStats?: Readonly<Record<string, NicStats>> | undefined;
}

/** Reads one node's facts; undefined when the node does not exist. */
export async function readNodeMetricsFacts(zk: ZkClient, name: string, opts: KeyReadOptions = {}): Promise<NodeMetricsFacts | undefined> {
  const k = nodeKeys(name);
  if ((await zk.exists(k.root.path)) === undefined) return undefined;
  const [daemonState, domainState, routerState, health, staticData, cpuLoad, vcpuAlloc, domainsCount, memTotal, memUsed, memFree, memAlloc, memProv, net] = await readKnownKeys(
    zk, [k.daemonState, k.domainState, k.routerState, k.monitoringHealth, k.staticData, k.cpuLoad, k.vcpuAlloc, k.domainsCount,
      k.memTotal, k.memUsed, k.memFree, k.memAlloc, k.memProv, k.networkStats], opts,
  );
  return {
    name, daemonState, domainState, routerState, health, staticData, cpuLoad, vcpuAlloc, domainsCount,
    memTotalMiB: memTotal, memUsedMiB: memUsed, memFreeMiB: memFree, memAllocMiB: memAlloc, memProvMiB: memProv,
    networkStats: nicStats(net, k.networkStats.path, opts.logger),
  };
}

const NIC_NUMBERS = ['rx_bps', 'tx_bps', 'rx_pps', 'tx_pps', 'total_bps', 'link_speed'] as const;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `network_stats` checked against the original's shape; a value of another shape is logged and unknown. */
export function nicStats(v: unknown, key: string, logger?: Logger): Record<string, NicStats> | undefined {
  if (v === undefined) return undefined;
  const ok = isRecord(v) && Object.values(v).every((nic) => isRecord(nic)
    && NIC_NUMBERS.every((f) => typeof nic[f] === 'number' && Number.isFinite(nic[f]))
    && typeof nic.state === 'string');
  if (ok) return v as Record<string, NicStats>;
  logger?.warn({ key }, `bad value in Zookeeper at ${key}: not {iface: {rx_bps, tx_bps, rx_pps, tx_pps, total_bps, link_speed, state}}; no network figures for the node`);
  return undefined;
}

/** A fault's keys the metrics count. */
export interface FaultMetricsFacts {
  id: string;
  status?: FaultStatus | undefined;
  delta?: number | undefined;
}

/** One OSD: where it lives and its stored stats (null = never written or unreadable). */
export interface OsdMetricsFacts {
  id: string;
  node?: string | undefined;
  device?: string | undefined;
  dbDevice?: string | undefined;
  stats?: StoredOsdStats | undefined;
}

/** One pool: its keys, its stored stats and how many volumes it has. */
export interface PoolMetricsFacts {
  name: string;
  tier?: string | undefined;
  pgs?: number | undefined;
  volumes: number;
  stats?: StoredPoolStats | undefined;
}

/** The whole tree the cluster-wide metrics need. */
export interface ClusterMetricsFacts {
  primaryNode?: string | undefined;
  upstreamIp?: string | undefined;
  maintenance?: boolean | undefined;
  nodes: NodeMetricsFacts[];
  vms: VmMetricsFacts[];
  faults: FaultMetricsFacts[];
  networks: number;
  osds: OsdMetricsFacts[];
  pools: PoolMetricsFacts[];
  volumes: number;
  snapshots: number;
}

/** Child names, sorted; none when the parent is absent. */
async function childNames(zk: ZkClient, path: string, opts: KeyReadOptions): Promise<string[]> {
  try {
    return (await zk.children(path, opts)).sort();
  } catch (err) {
    if (isZkError(err, 'NO_NODE')) return [];
    throw err;
  }
}

async function mapChildren<T>(zk: ZkClient, path: string, opts: KeyReadOptions, read: (name: string) => Promise<T | undefined>): Promise<T[]> {
  const out: (T | undefined)[] = await Promise.all((await childNames(zk, path, opts)).map(read));
  return out.filter((x): x is T => x !== undefined);
}

async function readStorageFacts(zk: ZkClient, opts: KeyReadOptions): Promise<Pick<ClusterMetricsFacts, 'osds' | 'pools' | 'volumes' | 'snapshots'>> {
  const [osds, pools, volumePools, snapPools] = await Promise.all([
    mapChildren(zk, paths.ceph.osds, opts, async (id) => {
      const k = osdKeys(id);
      const [node, device, dbDevice, stats] = await readKnownKeys(zk, [k.node, k.device, k.dbDevice, k.stats], opts);
      return { id, node, device, dbDevice, stats };
    }),
    mapChildren(zk, paths.ceph.pools, opts, async (name) => {
      const k = poolKeys(name);
      const [[tier, pgs, stats], vols] = await Promise.all([
        readKnownKeys(zk, [k.tier, k.pgs, k.stats], opts), childNames(zk, volumePoolKeys(name).root.path, opts),
      ]);
      return { name, tier, pgs, stats, volumes: vols.length };
    }),
    mapChildren(zk, paths.ceph.volumes, opts, async (pool) => (await childNames(zk, volumePoolKeys(pool).root.path, opts)).length),
    mapChildren(zk, paths.ceph.snapshots, opts, async (pool) => {
      const vols = await childNames(zk, snapshotPoolKeys(pool).root.path, opts);
      const counts = await Promise.all(vols.map(async (v) => (await childNames(zk, snapshotVolumeKeys(pool, v).root.path, opts)).length));
      return counts.reduce((s, n) => s + n, 0);
    }),
  ]);
  const sum = (xs: number[]): number => xs.reduce((s, n) => s + n, 0);
  return { osds, pools, volumes: sum(volumePools), snapshots: sum(snapPools) };
}

/** Reads everything the cluster-wide metrics need (the primary's scrape). */
export async function readClusterMetricsFacts(zk: ZkClient, opts: KeyReadOptions = {}): Promise<ClusterMetricsFacts> {
  const c = clusterKeys;
  const [[primaryNode, upstreamIp, maintenance], nodes, vms, faults, networks, storage] = await Promise.all([
    readKnownKeys(zk, [c.primaryNode, c.upstreamIp, c.maintenance], opts),
    mapChildren(zk, paths.nodes, opts, (n) => readNodeMetricsFacts(zk, n, opts)),
    mapChildren(zk, paths.domains, opts, (uuid) => readVmMetricsFacts(zk, uuid, opts)),
    mapChildren(zk, paths.faults.root, opts, async (id) => {
      const k = faultKeys(id);
      const [status, delta] = await readKnownKeys(zk, [k.status, k.delta], opts);
      return { id, status, delta };
    }),
    childNames(zk, paths.networks, opts),
    readStorageFacts(zk, opts),
  ]);
  return { primaryNode, upstreamIp, maintenance, nodes, vms, faults, networks: networks.length, ...storage };
}

