import { bool, int, json, oneOf, text } from './codec.js';
import {
  cephHealthJson, cephStatsStateJson, osdStatsJson, poolStatsJson, type CephHealth, type CephStatsState, type StoredOsdStats,
  type StoredPoolStats,
} from './ceph-stats.js';
import { keySpec as key } from './key-spec.js';
import { paths } from './schema.js';

/** A pool's `tier` (the original's device classes; `default` = no class rule). */
export const POOL_TIERS = ['default', 'hdd', 'ssd', 'nvme'] as const;
export type PoolTier = (typeof POOL_TIERS)[number];

/**
 * The cluster-wide storage keys (inventory §1.1), written by cephd on the primary every keepalive:
 * `/ceph` = `ceph status` as Ceph prints it for people, `/ceph/health` = the JSON of
 * `ceph health --format json`, `/ceph/util` = `ceph df` for people.
 */
export const cephKeys = {
  status: key(paths.ceph.root, text, ''),
  /** `null` = never written (the schema's `""`) or not JSON. */
  health: key<CephHealth, null>(paths.ceph.health, cephHealthJson, null),
  util: key(paths.ceph.util, text, ''),
  /** Ours, not in schema v15 (see `CephStatsState`); `null` = absent (never written) or unreadable. */
  statsState: key<CephStatsState, null>(paths.ceph.statsState, cephStatsStateJson, null),
} as const;

/** The keys of `/ceph/osds/<id>` (parents before children). */
export function osdKeys(id: string | number) {
  const p = paths.ceph.osd(id);
  return {
    root: key(p.root, text, ''),
    /** The node the OSD lives on. */
    node: key(p.node, text, ''),
    device: key(p.device, text, ''),
    dbDevice: key(p.dbDevice, text, ''),
    fsid: key(p.fsid, text, ''),
    fsidOsd: key(p.fsidOsd, text, ''),
    fsidCluster: key(p.fsidCluster, text, ''),
    lvm: key(p.lvm, text, ''),
    lvmVg: key(p.lvmVg, text, ''),
    lvmLv: key(p.lvmLv, text, ''),
    isSplit: key(p.isSplit, bool, false, 'False'),
    /** See `OsdStats` (what cephd writes) and `StoredOsdStats`; `null` = never written or not JSON. */
    stats: key<StoredOsdStats, null>(p.stats, osdStatsJson, null),
  } as const;
}

/** The keys of `/ceph/pools/<name>`. */
export function poolKeys(name: string) {
  const p = paths.ceph.pool(name);
  return {
    root: key(p.root, text, ''),
    pgs: key(p.pgs, int, 0),
    tier: key<PoolTier>(p.tier, oneOf(POOL_TIERS), 'default', 'default'),
    /** See `PoolStats`; `null` = never written or not JSON. */
    stats: key<StoredPoolStats, null>(p.stats, poolStatsJson, null),
  } as const;
}

/** `/ceph/volumes/<pool>`: `""`, the parent of the pool's volumes (created with the pool). */
export function volumePoolKeys(pool: string) {
  return { root: key(paths.ceph.volumePool(pool), text, '') } as const;
}

/**
 * The keys of `/ceph/volumes/<pool>/<vol>`: root `""`, `stats` = the JSON of
 * `rbd info --format json <pool>/<vol>` (the original's API adjusts its `snapshot_count`).
 * The shape is Ceph's; `null` = never written or not JSON.
 */
export function volumeKeys(pool: string, vol: string) {
  const p = paths.ceph.volume(pool, vol);
  return { root: key(p.root, text, ''), stats: key<unknown, null>(p.stats, json, null) } as const;
}

/** `/ceph/snapshots/<pool>`: `""`, the parent of the pool's volumes' snapshots. */
export function snapshotPoolKeys(pool: string) {
  return { root: key(paths.ceph.snapshotPool(pool), text, '') } as const;
}

/** `/ceph/snapshots/<pool>/<vol>`: `""`, the parent of one volume's snapshots. */
export function snapshotVolumeKeys(pool: string, vol: string) {
  return { root: key(paths.ceph.snapshotVolume(pool, vol), text, '') } as const;
}

/**
 * The keys of `/ceph/snapshots/<pool>/<vol>/<snap>`: root `""`, `stats` = JSON of the snapshot's
 * `rbd info`. The shape is Ceph's; `null` = never written or not JSON.
 */
export function snapshotKeys(pool: string, vol: string, snap: string) {
  const p = paths.ceph.snapshot(pool, vol, snap);
  return { root: key(p.root, text, ''), stats: key<unknown, null>(p.stats, json, null) } as const;
}
