/**
 * `pvc storage status|util|osd list|pool list|volume list|volume snapshot list`: read from
 * Zookeeper only (what cephd on the primary keeps there), tables for people, JSON for scripts.
 *
 * @module
 */
import { cephKeys, clusterKeys, formatBytes, readKeys, type ZkClient } from '@pvc/zk';
import type { CliContext } from '../context.js';
import type { Column, Format } from '../output.js';
import { limitMatcher } from './network-read.js';
import { readOsds, readPools, readSnapshots, readVolumes, type OsdEntry, type PoolEntry, type SnapshotEntry, type VolumeEntry } from './storage-read.js';

const dash = (v: unknown): string => (v === undefined || v === null || v === '' ? '-' : String(v));
const bytes = (v: unknown): string => (typeof v === 'number' ? formatBytes(v) : dash(v));
const percent = (v: unknown): string => (typeof v === 'number' ? `${(v * 100).toFixed(1)}%` : dash(v));

/** A note when the stored figures are not current (cephd's `/ceph/stats_state`). */
async function staleNote(ctx: CliContext, zk: ZkClient): Promise<void> {
  const [state] = await readKeys(zk, [cephKeys.statsState]);
  if (!state) return;
  const reasons = Object.entries(state.stale).map(([what, why]) => `${what}: ${why}`);
  if (reasons.length > 0) {
    const since = state.stale_since === null ? '' : ` since ${new Date(state.stale_since * 1000).toISOString()}`;
    ctx.output.note(`pvc: warning: storage figures not current${since} (${reasons.join('; ')})`);
  }
}

/** `storage status` (`/ceph`: `ceph status` text) and `storage util` (`/ceph/util`: `ceph df` text). */
export async function showCephText(ctx: CliContext, which: 'status' | 'util', format: Format): Promise<void> {
  const { zk } = await ctx.cluster();
  const [text, primary] = await readKeys(zk, [which === 'status' ? cephKeys.status : cephKeys.util, clusterKeys.primaryNode]);
  if (format === 'json') return ctx.output.json({ type: which === 'status' ? 'status' : 'utilization', primary_node: primary, ceph_data: text });
  if (text.trim() === '') ctx.output.note(`No Ceph ${which === 'status' ? 'status' : 'utilization'} in Zookeeper yet (cephd on the primary writes it every keepalive)`);
  else ctx.output.line(text.trimEnd());
  await staleNote(ctx, zk);
}

const OSD_COLUMNS: readonly Column<OsdEntry>[] = [
  { header: 'ID', value: (o) => o.id, align: 'right' },
  { header: 'Node', value: (o) => dash(o.node) },
  { header: 'Up', value: (o) => dash(o.stats?.up) },
  { header: 'In', value: (o) => dash(o.stats?.in) },
  { header: 'Weight', value: (o) => dash(o.stats?.weight) },
  { header: 'Reweight', value: (o) => dash(o.stats?.reweight) },
  { header: 'Size', value: (o) => (typeof o.stats?.kb === 'number' ? formatBytes(o.stats.kb * 1024) : '-') },
  { header: 'Used', value: (o) => dash(o.stats?.used) },
  { header: 'Free', value: (o) => dash(o.stats?.avail) },
  { header: 'Util%', value: (o) => (typeof o.stats?.utilization === 'number' ? o.stats.utilization.toFixed(2) : '-'), align: 'right' },
  { header: 'PGs', value: (o) => dash(o.stats?.pgs), align: 'right' },
  { header: 'Class', value: (o) => dash(o.stats?.class) },
  { header: 'State', value: (o) => dash(o.stats?.state) },
];

const POOL_COLUMNS: readonly Column<PoolEntry>[] = [
  { header: 'Name', value: (p) => p.name },
  { header: 'ID', value: (p) => dash(p.stats?.id), align: 'right' },
  { header: 'Tier', value: (p) => p.tier },
  { header: 'PGs', value: (p) => p.pgs, align: 'right' },
  { header: 'Volumes', value: (p) => p.volume_count, align: 'right' },
  { header: 'Stored', value: (p) => bytes(p.stats?.stored_bytes), align: 'right' },
  { header: 'Used', value: (p) => bytes(p.stats?.used_bytes), align: 'right' },
  { header: 'Free', value: (p) => bytes(p.stats?.free_bytes), align: 'right' },
  { header: 'Used%', value: (p) => percent(p.stats?.used_percent), align: 'right' },
  { header: 'Objects', value: (p) => dash(p.stats?.num_objects), align: 'right' },
];

const VOLUME_COLUMNS: readonly Column<VolumeEntry>[] = [
  { header: 'Name', value: (v) => v.name },
  { header: 'Pool', value: (v) => v.pool },
  { header: 'Size', value: (v) => bytes(v.stats?.size), align: 'right' },
  { header: 'Objects', value: (v) => dash(v.stats?.objects), align: 'right' },
  { header: 'Order', value: (v) => dash(v.stats?.order), align: 'right' },
  { header: 'Format', value: (v) => dash(v.stats?.format), align: 'right' },
  { header: 'Features', value: (v) => (Array.isArray(v.stats?.features) ? v.stats.features.join(',') : '-') },
  { header: 'Snapshots', value: (v) => dash(v.stats?.snapshot_count), align: 'right' },
];

const SNAPSHOT_COLUMNS: readonly Column<SnapshotEntry>[] = [
  { header: 'Name', value: (s) => s.snapshot },
  { header: 'Volume', value: (s) => s.volume },
  { header: 'Pool', value: (s) => s.pool },
];

function show<T>(ctx: CliContext, rows: readonly T[], format: Format, columns: readonly Column<T>[], none: string): void {
  if (format === 'json') ctx.output.json(rows);
  else if (rows.length === 0) ctx.output.note(none);
  else ctx.output.table(rows, columns);
}

/** `storage osd list [limit]` (limit: a regex on the OSD id). */
export async function showOsdList(ctx: CliContext, limit: string | undefined, format: Format): Promise<void> {
  const { zk } = await ctx.cluster();
  const m = limitMatcher(limit);
  show(ctx, (await readOsds(zk)).filter((o) => m(o.id)), format, OSD_COLUMNS, 'No OSDs found');
}

/** `storage pool list [limit]` (limit: a regex on the name). */
export async function showPoolList(ctx: CliContext, limit: string | undefined, format: Format): Promise<void> {
  const { zk } = await ctx.cluster();
  const m = limitMatcher(limit);
  show(ctx, (await readPools(zk)).filter((p) => m(p.name)), format, POOL_COLUMNS, 'No pools found');
}

/** `storage volume list [limit] [-p pool]` (limit: a regex on the name). */
export async function showVolumeList(ctx: CliContext, limit: string | undefined, pool: string | undefined, format: Format): Promise<void> {
  const { zk } = await ctx.cluster();
  const m = limitMatcher(limit);
  show(ctx, (await readVolumes(zk, pool)).filter((v) => m(v.name)), format, VOLUME_COLUMNS, 'No volumes found');
}

/** `storage volume snapshot list [limit] [-p pool] [-o volume]` (limit: a regex on the name). */
export async function showSnapshotList(ctx: CliContext, limit: string | undefined, where: { pool?: string; volume?: string }, format: Format): Promise<void> {
  const { zk } = await ctx.cluster();
  const m = limitMatcher(limit);
  const rows = (await readSnapshots(zk, where.pool, where.volume)).filter((s) => m(s.snapshot));
  show(ctx, rows, format, SNAPSHOT_COLUMNS, 'No snapshots found');
}
