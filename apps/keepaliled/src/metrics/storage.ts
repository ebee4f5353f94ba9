import { parseByteSize, type OsdMetricsFacts, type PoolMetricsFacts } from '@pvc/zk';
import { twoDp, type Samples } from './families.js';

/**
 * OSD and pool figures (`pvc_ceph_osd_*`, `pvc_ceph_pool_*`) from the stats cephd on the primary
 * keeps in Zookeeper, as the original's `get_resource_metrics` prints them: a field missing from
 * the stored stats (or not a number) has no sample, as there.
 *
 * @module
 */

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const kib = (v: unknown): number | undefined => {
  const n = num(v);
  return n === undefined ? undefined : n * 1024;
};

/**
 * A rate column of `ceph osd status` as stored (the text Ceph prints: `0`, `12`, `4.5k`, `2489M`),
 * read with the original's `format_bytes_fromhuman` (1024-based units); undefined when not a size.
 */
export function humanRate(v: unknown): number | undefined {
  if (typeof v === 'number') return num(v);
  if (typeof v !== 'string') return undefined;
  const t = v.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return Number(t);
  return parseByteSize(t.toUpperCase());
}

/** Whether the stored stats say the OSD is up (`up` = 1), as the original's list reads them. */
export function osdUp(o: OsdMetricsFacts): boolean {
  return o.stats?.up === 1;
}

/** Whether the stored stats say the OSD is in (`in` = 1). */
export function osdIn(o: OsdMetricsFacts): boolean {
  return o.stats?.in === 1;
}

/** Adds every `pvc_ceph_osd_*` figure of one OSD. */
export function addOsdMetrics(out: Samples, o: OsdMetricsFacts): void {
  const osd = { osd: o.id };
  const s = o.stats ?? {};
  if (o.node !== undefined && o.device !== undefined) out.add('pvc_ceph_osd_device', { ...osd, device: `${o.node}:${o.device}` }, 1);
  if (o.dbDevice !== undefined) out.add('pvc_ceph_osd_db_device', { ...osd, db_device: o.dbDevice }, 1);
  if (typeof s.class === 'string') out.add('pvc_ceph_osd_device_class', { ...osd, device_class: s.class }, 1);
  out.add('pvc_ceph_osd_util', osd, num(s.utilization));
  out.add('pvc_ceph_osd_var', osd, num(s.var));
  out.add('pvc_ceph_osd_pgs', osd, num(s.pgs));
  out.add('pvc_ceph_osd_size', osd, num(s.kb));
  out.add('pvc_ceph_osd_used', osd, kib(s.kb_used));
  out.add('pvc_ceph_osd_used_data', osd, kib(s.kb_used_data));
  out.add('pvc_ceph_osd_used_omap', osd, kib(s.kb_used_omap));
  out.add('pvc_ceph_osd_used_meta', osd, kib(s.kb_used_meta));
  out.add('pvc_ceph_osd_avail', osd, kib(s.kb_avail));
  out.add('pvc_ceph_osd_weight', osd, num(s.weight));
  out.add('pvc_ceph_osd_reweight', osd, num(s.reweight));
  out.add('pvc_ceph_osd_wr_ops', osd, humanRate(s.wr_ops));
  out.add('pvc_ceph_osd_wr_data', osd, humanRate(s.wr_data));
  out.add('pvc_ceph_osd_rd_ops', osd, humanRate(s.rd_ops));
  out.add('pvc_ceph_osd_rd_data', osd, humanRate(s.rd_data));
}

/** Adds every `pvc_ceph_pool_*` figure of one pool (`used_percent` stored as a fraction, shown ×100). */
export function addPoolMetrics(out: Samples, p: PoolMetricsFacts): void {
  const pool = { pool: p.name };
  const s = p.stats ?? {};
  if (p.tier !== undefined) out.add('pvc_ceph_pool_tier', { ...pool, tier: p.tier }, 1);
  out.add('pvc_ceph_pool_pgs', pool, p.pgs);
  out.add('pvc_ceph_pool_volumes', pool, p.volumes);
  out.add('pvc_ceph_pool_stored_bytes', pool, num(s.stored_bytes));
  out.add('pvc_ceph_pool_free_bytes', pool, num(s.free_bytes));
  out.add('pvc_ceph_pool_used_bytes', pool, num(s.used_bytes));
  const used = num(s.used_percent);
  out.add('pvc_ceph_pool_used_percent', pool, twoDp(used === undefined ? undefined : used * 100));
  out.add('pvc_ceph_pool_num_objects', pool, num(s.num_objects));
  out.add('pvc_ceph_pool_num_objects_clones', pool, num(s.num_object_clones));
  out.add('pvc_ceph_pool_num_objects_copies', pool, num(s.num_object_copies));
  out.add('pvc_ceph_pool_num_objects_missing_on_primary', pool, num(s.num_objects_missing_on_primary));
  out.add('pvc_ceph_pool_num_objects_unfound', pool, num(s.num_objects_unfound));
  out.add('pvc_ceph_pool_num_objects_degraded', pool, num(s.num_objects_degraded));
  out.add('pvc_ceph_pool_read_ops', pool, num(s.read_ops));
  out.add('pvc_ceph_pool_read_bytes', pool, num(s.read_bytes));
  out.add('pvc_ceph_pool_write_ops', pool, num(s.write_ops));
  out.add('pvc_ceph_pool_write_bytes', pool, num(s.write_bytes));
}
