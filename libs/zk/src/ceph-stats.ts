/**
 * The JSON values of the storage stats keys, with the original's field names (pvcnoded's keepalive
 * Ceph thread, inventory §1.5/§3.1). The codecs parse JSON and check the shape only as far as
 * readers rely on it; they keep every field they find, and encoding is `JSON.stringify`.
 */
import type { Codec } from './codec.js';
import { ZkDataError } from './errors.js';

/** One health check of `ceph health --format json` (`checks.<NAME>`). */
export interface CephHealthCheck {
  /** `HEALTH_WARN` or `HEALTH_ERR`. */
  readonly severity: string;
  readonly summary: { readonly message: string; readonly count?: number };
  readonly muted?: boolean;
}

/** `/ceph/health`: Ceph's own JSON of `ceph health` (other fields, e.g. `mutes`, are kept as they are). */
export interface CephHealth {
  /** `HEALTH_OK`, `HEALTH_WARN` or `HEALTH_ERR`. */
  readonly status: string;
  readonly checks: Readonly<Record<string, CephHealthCheck>>;
  readonly [field: string]: unknown;
}

/**
 * `/ceph/pools/<name>/stats`, as the original assembles it from the pool's `ceph df` entry
 * (`id`, `stats.stored` → `stored_bytes`, `stats.max_avail` → `free_bytes`, `stats.bytes_used` →
 * `used_bytes`, `stats.percent_used` → `used_percent` (a fraction 0–1, as Ceph gives it),
 * `stats.objects` → `num_objects`) and its `rados df` entry (the rest, same names).
 */
export type PoolStats = {
  readonly id: number;
  readonly stored_bytes: number;
  readonly free_bytes: number;
  readonly used_bytes: number;
  readonly used_percent: number;
  readonly num_objects: number;
  readonly num_object_clones: number;
  readonly num_object_copies: number;
  readonly num_objects_missing_on_primary: number;
  readonly num_objects_unfound: number;
  readonly num_objects_degraded: number;
  readonly read_ops: number;
  readonly read_bytes: number;
  readonly write_ops: number;
  readonly write_bytes: number;
};

/** The pool stats fields, in the original's order. */
export const POOL_STATS_FIELDS = [
  'id', 'stored_bytes', 'free_bytes', 'used_bytes', 'used_percent', 'num_objects', 'num_object_clones', 'num_object_copies',
  'num_objects_missing_on_primary', 'num_objects_unfound', 'num_objects_degraded', 'read_ops', 'read_bytes', 'write_ops',
  'write_bytes',
] as const satisfies readonly (keyof PoolStats)[];

/**
 * `/ceph/osds/<id>/stats`, as the original merges them: from `osd dump` (`uuid`, `up`, `in`,
 * `primary_affinity`), `osd df` (`utilization`, `var`, `pgs`, `kb`, `kb_used`, `kb_used_data`,
 * `kb_used_omap`, `kb_used_meta`, `kb_avail`, `weight` = `crush_weight`, `reweight`, `class` =
 * `device_class`) and the columns of the human `osd status` table, kept as the text Ceph prints
 * (`node` = short host name, `used`, `avail`, `wr_ops`, `wr_data`, `rd_ops`, `rd_data`, `state`,
 * e.g. `2489M`, `exists,up`).
 */
export type OsdStats = {
  readonly uuid: string;
  readonly up: number;
  readonly in: number;
  readonly primary_affinity: number;
  readonly utilization: number;
  readonly var: number;
  readonly pgs: number;
  readonly kb: number;
  readonly kb_used: number;
  readonly kb_used_data: number;
  readonly kb_used_omap: number;
  readonly kb_used_meta: number;
  readonly kb_avail: number;
  readonly weight: number;
  readonly reweight: number;
  readonly class: string;
  readonly node: string;
  readonly used: string;
  readonly avail: string;
  readonly wr_ops: string;
  readonly wr_data: string;
  readonly rd_ops: string;
  readonly rd_data: string;
  readonly state: string;
};

/** The OSD stats fields, in the original's order. */
export const OSD_STATS_FIELDS = [
  'uuid', 'up', 'in', 'primary_affinity', 'utilization', 'var', 'pgs', 'kb', 'kb_used', 'kb_used_data', 'kb_used_omap',
  'kb_used_meta', 'kb_avail', 'weight', 'reweight', 'class', 'node', 'used', 'avail', 'wr_ops', 'wr_data', 'rd_ops', 'rd_data',
  'state',
] as const satisfies readonly (keyof OsdStats)[];

/**
 * A stored OSD stats value: any of the fields may be missing or text — the original's `osd.add`
 * writes `"|"` placeholders before the primary's first stats write.
 */
export type StoredOsdStats = { readonly [K in keyof OsdStats]?: OsdStats[K] | string } & Readonly<Record<string, unknown>>;

/** A stored pool stats value (fields may be missing in a value another writer left). */
export type StoredPoolStats = Partial<PoolStats> & Readonly<Record<string, unknown>>;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `raw` as a JSON object; anything else (bad JSON, an array, a scalar) is a {@link ZkDataError} naming `key` and `format`. */
export function parseJsonObject(raw: string, key: string, format: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    throw new ZkDataError(key, raw, format);
  }
  if (!isRecord(v)) throw new ZkDataError(key, raw, format);
  return v;
}

function objectCodec<T>(format: string, check: (v: Record<string, unknown>) => boolean): Codec<T> {
  return {
    format,
    encode: (v) => JSON.stringify(v),
    decode: (raw, key) => {
      const v = parseJsonObject(raw, key, format);
      if (!check(v)) throw new ZkDataError(key, raw, format);
      return v as T;
    },
  };
}

function isCheck(v: unknown): boolean {
  return isRecord(v) && typeof v.severity === 'string' && isRecord(v.summary) && typeof v.summary.message === 'string';
}

/** `/ceph/health`: a JSON object with a text `status` and `checks` whose entries have a severity and a summary message. */
export const cephHealthJson: Codec<CephHealth> = objectCodec<CephHealth>(
  'the JSON of ceph health',
  (v) => typeof v.status === 'string' && isRecord(v.checks) && Object.values(v.checks).every(isCheck),
);

const scalar = (v: unknown): boolean => v === undefined || typeof v === 'number' || typeof v === 'string';

/** `/ceph/osds/<id>/stats`: a JSON object whose known fields, where present, are numbers or text. */
export const osdStatsJson: Codec<StoredOsdStats> = objectCodec<StoredOsdStats>(
  'a JSON object of OSD stats',
  (v) => OSD_STATS_FIELDS.every((f) => scalar(v[f])),
);

/** `/ceph/pools/<name>/stats`: a JSON object whose known fields, where present, are numbers. */
export const poolStatsJson: Codec<StoredPoolStats> = objectCodec<StoredPoolStats>(
  'a JSON object of pool stats',
  (v) => POOL_STATS_FIELDS.every((f) => v[f] === undefined || typeof v[f] === 'number'),
);

/**
 * `/ceph/stats_state` (ours, not in schema v15): written by cephd on the primary after every stats
 * pass, so a reader can tell current figures from old ones without a change to the original's keys.
 * - `time`: epoch seconds when the pass ended (an old `time` = no primary cephd is writing);
 * - `stale`: what this pass could not refresh, by its path under `/ceph` (`status` for `/ceph`
 *   itself, `health`, `util`, `pools`, `osds`, or one object: `pools/<name>`, `osds/<id>`), each
 *   with why (e.g. `ceph health: timed out after 3000 ms`); `{}` = every stats key is current;
 * - `stale_since`: epoch seconds of the first pass of the current stale episode, `null` when fresh;
 * - `node`: the writer.
 */
export interface CephStatsState {
  readonly time: number;
  readonly stale: Readonly<Record<string, string>>;
  readonly stale_since: number | null;
  readonly node: string;
}

/** `/ceph/stats_state`: the JSON of {@link CephStatsState}. */
export const cephStatsStateJson: Codec<CephStatsState> = objectCodec<CephStatsState>(
  'the JSON of the storage stats state',
  (v) =>
    typeof v.time === 'number' && isRecord(v.stale) && Object.values(v.stale).every((r) => typeof r === 'string') &&
    (v.stale_since === null || typeof v.stale_since === 'number') && typeof v.node === 'string',
);
