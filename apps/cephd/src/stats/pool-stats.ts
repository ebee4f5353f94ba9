/**
 * Pool stats (pvc-inventory §3.1, §1.5) from `ceph df --format json` and `rados df --format json`,
 * as a pure function: the original's fields and names. The original zips the two `pools` lists by
 * index, which pairs the wrong pools whenever the two lists are ordered differently (`ceph df` lists
 * by pool id, `rados df` by name) — **[bug?]**; we pair them by pool name, which it plainly intends.
 */
import type { PoolStats } from '@pvc/zk';

/** What came out: the stats of each pool found in both, and why each other wanted pool has none. */
export interface PoolStatsResult {
  stats: Map<string, PoolStats>;
  /** Pool name → reason, for the wanted pools without stats. */
  missing: Map<string, string>;
}

type Rec = Record<string, unknown>;

const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The `pools` array of either command's JSON, by pool name. Throws when the shape is not Ceph's. */
function poolsByName(doc: unknown, command: string): Map<string, Rec> {
  if (!isRec(doc) || !Array.isArray(doc.pools)) throw new Error(`${command}: no "pools" list in its JSON`);
  const out = new Map<string, Rec>();
  for (const p of doc.pools) if (isRec(p) && typeof p.name === 'string') out.set(p.name, p);
  return out;
}

function num(rec: Rec, field: string, where: string): number {
  const v = rec[field];
  if (typeof v !== 'number') throw new Error(`${where}: "${field}" is ${v === undefined ? 'missing' : JSON.stringify(v)}`);
  return v;
}

/** One pool's stats; throws naming the first missing or non-numeric field. */
function onePool(name: string, df: Rec, rados: Rec): PoolStats {
  const s = df.stats;
  if (!isRec(s)) throw new Error(`pool ${name}: no "stats" in ceph df`);
  const d = `pool ${name} in ceph df`;
  const r = `pool ${name} in rados df`;
  return {
    id: num(df, 'id', d),
    stored_bytes: num(s, 'stored', d),
    free_bytes: num(s, 'max_avail', d),
    used_bytes: num(s, 'bytes_used', d),
    used_percent: num(s, 'percent_used', d),
    num_objects: num(s, 'objects', d),
    num_object_clones: num(rados, 'num_object_clones', r),
    num_object_copies: num(rados, 'num_object_copies', r),
    num_objects_missing_on_primary: num(rados, 'num_objects_missing_on_primary', r),
    num_objects_unfound: num(rados, 'num_objects_unfound', r),
    num_objects_degraded: num(rados, 'num_objects_degraded', r),
    read_ops: num(rados, 'read_ops', r),
    read_bytes: num(rados, 'read_bytes', r),
    write_ops: num(rados, 'write_ops', r),
    write_bytes: num(rados, 'write_bytes', r),
  };
}

/**
 * The stats of each pool in `wanted` (the pools PVC knows, `/ceph/pools` children). A wanted pool
 * missing from either output, or with a field missing, is in `missing` with the reason; pools
 * Ceph has but PVC does not know are ignored, as in the original. Throws when either document has
 * no `pools` list at all.
 */
export function poolStats(cephDf: unknown, radosDf: unknown, wanted: readonly string[]): PoolStatsResult {
  const df = poolsByName(cephDf, 'ceph df');
  const rados = poolsByName(radosDf, 'rados df');
  const result: PoolStatsResult = { stats: new Map(), missing: new Map() };
  for (const name of wanted) {
    const d = df.get(name);
    const r = rados.get(name);
    if (!d || !r) {
      result.missing.set(name, `pool ${name} is not in ${!d ? 'ceph df' : 'rados df'}`);
      continue;
    }
    try {
      result.stats.set(name, onePool(name, d, r));
    } catch (err) {
      result.missing.set(name, err instanceof Error ? err.message : String(err));
    }
  }
  return result;
}
