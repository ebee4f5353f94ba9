/**
 * One storage stats pass (pvc-inventory §3.1, the primary's Ceph thread): read which pools and OSDs
 * PVC knows, run the Ceph commands in parallel, and write what came back in one transaction per
 * group — the cluster keys (`/ceph`, `/ceph/health`, `/ceph/util`), the pools' `stats`, the OSDs'
 * `stats`. A source that failed, timed out or printed malformed JSON leaves its keys as they were
 * and is reported in `stale`; everything else is still written.
 *
 * Safety: stats are written only for pools and OSDs that exist in Zookeeper (a write never
 * creates an object: its parent must exist), and a pass that was aborted (the duty stopping on
 * relinquish) writes nothing more.
 */
import { AbortedError, describeError, type Clock } from '@pvc/runtime';
import { cephHealthJson, cephKeys, codec, isZkError, osdKeys, pair, paths, poolKeys, type WritePair, type ZkClient } from '@pvc/zk';
import type { CephCli } from '../host/ceph-cli.js';
import { osdStats } from './osd-stats.js';
import { poolStats } from './pool-stats.js';
import { commandOf, gather, type Gathered, type SourceName, type SourceResult } from './sources.js';

/** What a pass needs. */
export interface StatsPassDeps {
  zk: ZkClient;
  cli: CephCli;
  clock: Clock;
  /** Deadline of each Ceph command. */
  commandTimeoutMs: number;
  /** Deadline of each Zookeeper read and write. */
  zkTimeoutMs: number;
}

/** What one pass did. */
export interface PassReport {
  /** What was not refreshed, by path under `/ceph` (`status`, `health`, `util`, `pools`, `pools/<p>`, `osds`, `osds/<id>`) → why. */
  stale: Record<string, string>;
  /** The groups written: `cluster`, `pools`, `osds`. */
  written: string[];
  durationMs: number;
}

const CLUSTER_SOURCES: readonly SourceName[] = ['status', 'health', 'util'];
const POOL_SOURCES: readonly SourceName[] = ['cephDf', 'radosDf'];
const OSD_SOURCES: readonly SourceName[] = ['osdDump', 'osdDf', 'osdStatus'];

/** Children of `path`, `[]` when it does not exist. */
async function childrenOf(zk: ZkClient, path: string, timeoutMs: number, signal: AbortSignal | undefined): Promise<string[]> {
  try {
    return (await zk.children(path, { timeoutMs, signal })).sort();
  } catch (err) {
    if (isZkError(err, 'NO_NODE')) return [];
    throw err;
  }
}

/** The first failed source among `names`, as a reason, or undefined when all are there. */
function failure(g: Gathered, names: readonly SourceName[]): string | undefined {
  for (const n of names) {
    const r: SourceResult | undefined = g[n];
    // The port's errors name the command (`ceph osd df --format: …`, `… timed out after 3000 ms`).
    if (r && !r.ok) return r.reason;
  }
  return undefined;
}

function value(g: Gathered, n: SourceName): unknown {
  const r = g[n];
  return r?.ok ? r.value : undefined;
}

/** The cluster group's pairs, recording in `stale` each part that has none. */
function clusterPairs(g: Gathered, stale: Record<string, string>): WritePair[] {
  const pairs: WritePair[] = [];
  const bad = failure(g, ['status']);
  if (bad) stale.status = bad;
  else pairs.push(pair(cephKeys.status, String(value(g, 'status'))));
  const healthBad = failure(g, ['health']);
  if (healthBad) stale.health = healthBad;
  else {
    const text = String(value(g, 'health')).trim();
    const decoded = codec.safeDecode(cephHealthJson, text, paths.ceph.health);
    if (decoded.ok) pairs.push(pair(cephKeys.health, decoded.value));
    else stale.health = `${commandOf('health')}: malformed JSON output (${JSON.stringify(text.slice(0, 80))} is not ${decoded.error.expected})`;
  }
  const utilBad = failure(g, ['util']);
  if (utilBad) stale.util = utilBad;
  else pairs.push(pair(cephKeys.util, String(value(g, 'util'))));
  return pairs;
}

function poolPairs(g: Gathered, pools: readonly string[], stale: Record<string, string>): WritePair[] {
  if (pools.length === 0) return [];
  const bad = failure(g, POOL_SOURCES);
  if (bad) {
    stale.pools = bad;
    return [];
  }
  try {
    const r = poolStats(value(g, 'cephDf'), value(g, 'radosDf'), pools);
    for (const [name, why] of r.missing) stale[`pools/${name}`] = why;
    return [...r.stats].map(([name, s]) => pair(poolKeys(name).stats, s));
  } catch (err) {
    stale.pools = describeError(err);
    return [];
  }
}

function osdPairs(g: Gathered, osds: readonly string[], stale: Record<string, string>): WritePair[] {
  if (osds.length === 0) return [];
  const bad = failure(g, OSD_SOURCES);
  if (bad) {
    stale.osds = bad;
    return [];
  }
  try {
    const r = osdStats(value(g, 'osdDump'), value(g, 'osdDf'), String(value(g, 'osdStatus')), osds);
    for (const [id, why] of r.missing) stale[`osds/${id}`] = why;
    return [...r.stats].map(([id, s]) => pair(osdKeys(id).stats, s));
  } catch (err) {
    stale.osds = describeError(err);
    return [];
  }
}

/**
 * Runs one pass. Rejects only when Zookeeper cannot be read (nothing is known, nothing written) or
 * on abort; a failed group write is reported in `stale` under the group's keys.
 */
export async function statsPass(deps: StatsPassDeps, signal?: AbortSignal): Promise<PassReport> {
  const { zk, clock, zkTimeoutMs } = deps;
  const t0 = clock.now();
  const [pools, osds] = await Promise.all([
    childrenOf(zk, paths.ceph.pools, zkTimeoutMs, signal),
    childrenOf(zk, paths.ceph.osds, zkTimeoutMs, signal),
  ]);
  // The original asks for OSD figures only when PVC knows OSDs ("otherwise `ceph osd df` hangs"),
  // and for pool figures only for known pools.
  const names = [...CLUSTER_SOURCES, ...(pools.length > 0 ? POOL_SOURCES : []), ...(osds.length > 0 ? OSD_SOURCES : [])];
  const g = await gather(deps.cli, names, { timeoutMs: deps.commandTimeoutMs, signal });
  const stale: Record<string, string> = {};
  const groups: [string, WritePair[], string[]][] = [
    ['cluster', clusterPairs(g, stale), ['status', 'health', 'util']],
    ['pools', poolPairs(g, pools, stale), ['pools']],
    ['osds', osdPairs(g, osds, stale), ['osds']],
  ];
  const written: string[] = [];
  for (const [group, pairs, keys] of groups) {
    if (pairs.length === 0) continue;
    if (signal?.aborted) throw new AbortedError('the storage stats pass');
    try {
      await zk.write(pairs, { timeoutMs: zkTimeoutMs, signal });
      written.push(group);
    } catch (err) {
      if (signal?.aborted) throw err;
      const why = `Zookeeper write failed: ${describeError(err)}`;
      for (const k of keys) if (group !== 'cluster' || pairs.some(([p]) => p === cephPath(k))) stale[k] ??= why;
    }
  }
  return { stale, written, durationMs: clock.now() - t0 };
}

function cephPath(part: string): string {
  return part === 'status' ? paths.ceph.root : `${paths.ceph.root}/${part}`;
}
