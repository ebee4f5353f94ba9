/**
 * Reads what a request's planner looks at (plan.ts `viewNeeds`): the pool with its volumes and
 * snapshots from Zookeeper (through the key table), and from Ceph, at the time of the request,
 * the pool list, CRUSH rules, `ceph df` figures and the image's size, as the request needs them.
 *
 * @module
 */
import { isZkError, poolKeys, readKey, snapshotKeys, snapshotVolumeKeys, volumeKeys, volumePoolKeys, type StorageRequest, type ZkClient } from '@pvc/zk';
import type { CephCli } from '../host/ceph-cli.js';
import { imageSizeOf, poolDf } from './guard.js';
import { viewNeeds } from './plan.js';
import type { CephCommand, PoolState, StorageView, VolumeState } from './plan-types.js';

/** What the storage request work runs with. */
export interface StorageIo {
  zk: ZkClient;
  ceph: CephCli;
  /** Deadline of each Ceph command; `long` ones (copy, rm, purge, rollback) get `longTimeoutMs`. */
  timeoutMs: number;
  longTimeoutMs: number;
  /** Deadline of each Zookeeper call. */
  zkTimeoutMs: number;
}

/** Runs a Ceph command for its JSON. */
export function cephJson(io: StorageIo, c: CephCommand): Promise<unknown> {
  return io.ceph.json(c.tool, c.args, { timeoutMs: c.long ? io.longTimeoutMs : io.timeoutMs });
}

/** Child names, or none when the node is absent. */
export async function childrenOf(zk: ZkClient, path: string, timeoutMs: number): Promise<string[]> {
  try {
    return await zk.children(path, { timeoutMs });
  } catch (err) {
    if (isZkError(err, 'NO_NODE')) return [];
    throw err;
  }
}

async function readVolume(io: StorageIo, pool: string, vol: string): Promise<VolumeState> {
  const opts = { timeoutMs: io.zkTimeoutMs };
  const parent = snapshotVolumeKeys(pool, vol).root.path;
  const [stats, names, parentStat] = await Promise.all([
    readKey(io.zk, volumeKeys(pool, vol).stats, opts),
    childrenOf(io.zk, parent, io.zkTimeoutMs),
    io.zk.exists(parent, opts),
  ]);
  const snaps = await Promise.all(names.map(async (s) => [s, await readKey(io.zk, snapshotKeys(pool, vol, s).stats, opts)] as const));
  return { stats, snapshots: new Map(snaps), snapshotParent: parentStat !== undefined };
}

/** The pool as Zookeeper has it (undefined = no pool object). */
export async function readPool(io: StorageIo, pool: string): Promise<PoolState | undefined> {
  const k = poolKeys(pool);
  if ((await io.zk.exists(k.root.path, { timeoutMs: io.zkTimeoutMs })) === undefined) return undefined;
  const pgs = await readKey(io.zk, k.pgs, { timeoutMs: io.zkTimeoutMs });
  const names = await childrenOf(io.zk, volumePoolKeys(pool).root.path, io.zkTimeoutMs);
  const volumes = await Promise.all(names.map(async (v) => [v, await readVolume(io, pool, v)] as const));
  return { pgs, volumes: new Map(volumes) };
}

function strings(v: unknown, what: string): string[] {
  if (!Array.isArray(v) || !v.every((s) => typeof s === 'string')) throw new Error(`${what}: expected a JSON list of names`);
  return v;
}

/** Everything `r`'s planner needs. Ceph and Zookeeper errors propagate (the request fails with them). */
export async function readView(io: StorageIo, r: StorageRequest): Promise<StorageView> {
  const needs = viewNeeds(r);
  const pool = await readPool(io, r.pool);
  const view: { -readonly [K in keyof StorageView]: StorageView[K] } = { pool };
  if (needs.cephPools) view.cephHasPool = strings(await cephJson(io, { tool: 'ceph', args: ['osd', 'pool', 'ls'] }), 'ceph osd pool ls').includes(r.pool);
  if (needs.crushRules) view.crushRules = strings(await cephJson(io, { tool: 'ceph', args: ['osd', 'crush', 'rule', 'ls'] }), 'ceph osd crush rule ls');
  if (needs.df) view.df = poolDf(await cephJson(io, { tool: 'ceph', args: ['df'] }), r.pool);
  if (needs.imageSize && 'volume' in r && pool?.volumes.has(r.volume)) {
    const size = imageSizeOf(await cephJson(io, { tool: 'rbd', args: ['info', `${r.pool}/${r.volume}`] }));
    if (size !== undefined) view.imageSize = size;
  }
  return view;
}
