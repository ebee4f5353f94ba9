/**
 * Reading the storage objects for `pvc storage ... list`: `/ceph/osds`, `/ceph/pools`,
 * `/ceph/volumes/<pool>/<vol>` and `/ceph/snapshots/<pool>/<vol>/<snap>`, each value through its
 * key's codec (a bad value reads as its default and is reported as a `pvc: warning:` line). The
 * shapes are the original API's list entries.
 *
 * @module
 */
import {
  isZkError, osdKeys, paths, poolKeys, readKeys, snapshotKeys, volumeKeys, volumePoolKeys, snapshotPoolKeys, snapshotVolumeKeys, type PoolTier,
  type StoredOsdStats, type StoredPoolStats, type ZkClient,
} from '@pvc/zk';

/** A pool as `pool list` shows it. */
export interface PoolEntry {
  name: string;
  volume_count: number;
  tier: PoolTier;
  pgs: number;
  stats: StoredPoolStats | null;
}

/** A volume: its `rbd info` JSON as stored. */
export interface VolumeEntry {
  name: string;
  pool: string;
  stats: Record<string, unknown> | null;
}

export interface SnapshotEntry {
  snapshot: string;
  volume: string;
  pool: string;
  stats: Record<string, unknown> | null;
}

export interface OsdEntry {
  id: string;
  node: string;
  device: string;
  db_device: string;
  stats: StoredOsdStats | null;
}

/** Child names in a stable order (numeric where they are numbers); none when the parent is absent. */
export async function childNames(zk: ZkClient, path: string): Promise<string[]> {
  try {
    const names = await zk.children(path);
    return names.sort((a, b) => (/^\d+$/.test(a) && /^\d+$/.test(b) ? Number(a) - Number(b) : a < b ? -1 : a > b ? 1 : 0));
  } catch (err) {
    if (isZkError(err, 'NO_NODE')) return [];
    throw err;
  }
}

function record(v: unknown): Record<string, unknown> | null {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}

export async function readPools(zk: ZkClient): Promise<PoolEntry[]> {
  return Promise.all((await childNames(zk, paths.ceph.pools)).map(async (name) => {
    const k = poolKeys(name);
    const [pgs, tier, stats] = await readKeys(zk, [k.pgs, k.tier, k.stats]);
    const volumes = await childNames(zk, volumePoolKeys(name).root.path);
    return { name, volume_count: volumes.length, tier, pgs, stats };
  }));
}

/** Volumes of `pool`, or of every pool. */
export async function readVolumes(zk: ZkClient, pool?: string): Promise<VolumeEntry[]> {
  const pools = pool === undefined ? await childNames(zk, paths.ceph.volumes) : [pool];
  const perPool = await Promise.all(pools.map(async (p) => Promise.all((await childNames(zk, volumePoolKeys(p).root.path)).map(async (name) => {
    const [stats] = await readKeys(zk, [volumeKeys(p, name).stats]);
    return { name, pool: p, stats: record(stats) };
  }))));
  return perPool.flat();
}

/** Snapshots of the volumes of `pool` (or every pool), only of `volume` when given. */
export async function readSnapshots(zk: ZkClient, pool?: string, volume?: string): Promise<SnapshotEntry[]> {
  const pools = pool === undefined ? await childNames(zk, paths.ceph.snapshots) : [pool];
  const out: SnapshotEntry[] = [];
  for (const p of pools) {
    const volumes = volume === undefined ? await childNames(zk, snapshotPoolKeys(p).root.path) : [volume];
    for (const v of volumes) {
      for (const snapshot of await childNames(zk, snapshotVolumeKeys(p, v).root.path)) {
        const [stats] = await readKeys(zk, [snapshotKeys(p, v, snapshot).stats]);
        out.push({ snapshot, volume: v, pool: p, stats: record(stats) });
      }
    }
  }
  return out;
}

export async function readOsds(zk: ZkClient): Promise<OsdEntry[]> {
  return Promise.all((await childNames(zk, paths.ceph.osds)).map(async (id) => {
    const k = osdKeys(id);
    const [node, device, dbDevice, stats] = await readKeys(zk, [k.node, k.device, k.dbDevice, k.stats]);
    return { id, node, device, db_device: dbDevice, stats };
  }));
}
