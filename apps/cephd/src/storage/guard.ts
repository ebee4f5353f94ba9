/**
 * The original's size guards for a new, resized or cloned volume (inventory §8): the volume must
 * be smaller than the pool's free bytes and, unless forced, must keep the pool under 80 % full —
 * of (used + free), the size must stay below 80 % minus what is used. Figures from `ceph df` at
 * the time of the request: `max_avail` (free) and `bytes_used` (used) of the pool, as the
 * original's pool stats name them `free_bytes` and `used_bytes`.
 *
 * @module
 */
import { formatBytes } from '@pvc/zk';
import type { PoolDf } from './plan-types.js';

/** The share of a pool a volume may fill without `--force`. */
export const SAFE_FILL = 0.8;

/** Why `sizeBytes` does not fit `df` (undefined = it does). */
export function sizeGuard(sizeBytes: number, df: PoolDf, force: boolean): string | undefined {
  if (sizeBytes >= df.freeBytes) {
    return `the requested volume size ${formatBytes(sizeBytes)} is not smaller than the free space in the pool (${formatBytes(df.freeBytes)})`;
  }
  const safeFree = Math.floor((df.usedBytes + df.freeBytes) * SAFE_FILL) - df.usedBytes;
  if (!force && sizeBytes >= safeFree) {
    return `the requested volume size ${formatBytes(sizeBytes)} is not smaller than the safe free space in the pool `
      + `(${formatBytes(Math.max(0, safeFree))} for 80% full); retry with --force to ignore this`;
  }
  return undefined;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The pool's entry of `ceph df --format json` (`pools[].name`, `stats.max_avail`,
 * `stats.bytes_used`). Undefined when the pool is not listed; throws when the output is not that shape.
 */
export function poolDf(df: unknown, pool: string): PoolDf | undefined {
  const pools = isRecord(df) ? df.pools : undefined;
  if (!Array.isArray(pools)) throw new Error('ceph df: no "pools" list in its JSON');
  const entry: unknown = pools.find((p) => isRecord(p) && p.name === pool);
  if (entry === undefined) return undefined;
  const stats = isRecord(entry) ? entry.stats : undefined;
  const free = isRecord(stats) ? stats.max_avail : undefined;
  const used = isRecord(stats) ? stats.bytes_used : undefined;
  if (typeof free !== 'number' || typeof used !== 'number') throw new Error(`ceph df: pool "${pool}" has no numeric max_avail/bytes_used`);
  return { freeBytes: free, usedBytes: used };
}

/** The `size` of an `rbd info` JSON, or undefined. */
export function imageSizeOf(info: unknown): number | undefined {
  return isRecord(info) && typeof info.size === 'number' ? info.size : undefined;
}

/** `rbd info` JSON with `snapshot_count` moved by `delta` (the original's adjustment); undefined if it has none. */
export function withSnapshotCount(stats: unknown, delta: number): Record<string, unknown> | undefined {
  if (!isRecord(stats) || typeof stats.snapshot_count !== 'number') return undefined;
  return { ...stats, snapshot_count: Math.max(0, stats.snapshot_count + delta) };
}
