/**
 * Volume requests as plans (pure): add, remove, resize, rename, clone — the original's `rbd`
 * commands (inventory §8) with its size guards (guard.ts). A volume object is its root `""` and
 * `stats` = `rbd info --format json`, created together with its snapshot parent
 * `/ceph/snapshots/<pool>/<vol>`.
 *
 * @module
 */
import { formatBytes, snapshotKeys, snapshotVolumeKeys, volumeKeys, type StorageRequest } from '@pvc/zk';
import { imageSizeOf, sizeGuard } from './guard.js';
import { change, refuse, type CephCommand, type Plan, type Planned, type PlanStep, type StorageView, type VolumeState, type ZkChange } from './plan-types.js';

type Req<O extends StorageRequest['op']> = Extract<StorageRequest, { op: O }>;

const rbd = (...args: string[]): CephCommand => ({ tool: 'rbd', args });
const rbdLong = (...args: string[]): CephCommand => ({ tool: 'rbd', args, long: true });
const bytesArg = (n: number): string => `${n}B`;

/** The Zookeeper trees of a volume: its object and its snapshots' parent. */
function volumeTrees(pool: string, vol: string): string[] {
  return [volumeKeys(pool, vol).root.path, snapshotVolumeKeys(pool, vol).root.path];
}

/** A new volume object with `rbd info` of the image in `info` (a stale snapshot parent replaced). */
function newVolume(pool: string, vol: string, info: unknown, snapshots: ReadonlyMap<string, unknown> = new Map()): ZkChange {
  const k = volumeKeys(pool, vol);
  const snaps = [...snapshots].flatMap(([name, stats]): [string, string][] => {
    const s = snapshotKeys(pool, vol, name);
    return [[s.root.path, ''], [s.stats.path, stats === null || stats === undefined ? '{}' : JSON.stringify(stats)]];
  });
  return change({
    deleteTrees: [snapshotVolumeKeys(pool, vol).root.path],
    create: [[k.root.path, ''], [k.stats.path, JSON.stringify(info)], [snapshotVolumeKeys(pool, vol).root.path, ''], ...snaps],
  });
}

/** Refusal when the pool or the volume is not in Zookeeper, else the volume. */
function existing(pool: string, vol: string, view: StorageView): VolumeState | string {
  if (!view.pool) return `no pool "${pool}" in the cluster`;
  return view.pool.volumes.get(vol) ?? `no volume "${vol}" in pool "${pool}"`;
}

/** Refusal when the pool is missing or `vol` already exists in it. */
function absent(pool: string, vol: string, view: StorageView): string | undefined {
  if (!view.pool) return `no pool "${pool}" in the cluster`;
  return view.pool.volumes.has(vol) ? `volume "${vol}" already exists in pool "${pool}"` : undefined;
}

/** The size guard, or a refusal when `ceph df` does not list the pool. */
function guard(pool: string, size: number, view: StorageView, force: boolean): string | undefined {
  if (!view.df) return `Ceph does not list pool "${pool}" in ceph df`;
  return sizeGuard(size, view.df, force);
}

function plan(p: Plan): Planned {
  return { kind: 'plan', plan: p };
}

/** `volume add`: `rbd create --size <B>B`, then the object (the image removed if that fails). */
export function planVolumeAdd(r: Req<'volume.add'>, view: StorageView): Planned {
  const why = absent(r.pool, r.volume, view) ?? guard(r.pool, r.sizeBytes, view, r.force);
  if (why) return refuse(why);
  const img = `${r.pool}/${r.volume}`;
  return plan({
    steps: [{ what: `creating volume "${img}"`, run: rbd('create', '--size', bytesArg(r.sizeBytes), img), undo: { what: `volume "${img}" removed`, run: rbdLong('rm', img) } }],
    reads: [rbd('info', img)],
    change: ([info]) => newVolume(r.pool, r.volume, info),
    done: `Created RBD volume "${img}" of size ${formatBytes(r.sizeBytes)}`,
  });
}

/**
 * The removal of one volume: `snap purge` (its snapshot objects go), `rm` (its object goes). Not
 * undoable; an image already gone in Ceph counts as removed.
 */
export function volumeRemovalSteps(pool: string, vol: string, state: VolumeState | undefined): PlanStep[] {
  const img = `${pool}/${vol}`;
  const snaps = [...(state?.snapshots.keys() ?? [])].map((s) => snapshotKeys(pool, vol, s).root.path);
  return [
    { what: `purging the snapshots of "${img}"`, run: rbdLong('snap', 'purge', img), missingOk: true, reflect: change({ deleteTrees: snaps }) },
    { what: `removing volume "${img}"`, run: rbdLong('rm', img), missingOk: true, reflect: change({ deleteTrees: volumeTrees(pool, vol) }) },
  ];
}

/** `volume remove`: its snapshots and the image, then its Zookeeper trees. */
export function planVolumeRemove(r: Req<'volume.remove'>, view: StorageView): Planned {
  const state = existing(r.pool, r.volume, view);
  if (typeof state === 'string') return refuse(state);
  return plan({
    steps: volumeRemovalSteps(r.pool, r.volume, state),
    reads: [],
    change: () => change({ deleteTrees: volumeTrees(r.pool, r.volume) }),
    done: `Removed RBD volume "${r.pool}/${r.volume}"`,
  });
}

/**
 * `volume resize`: `rbd resize --size <B>B` (shrinking is refused by rbd, as in the original), then
 * the new `rbd info` as stats; if that fails the image is resized back.
 */
export function planVolumeResize(r: Req<'volume.resize'>, view: StorageView): Planned {
  const state = existing(r.pool, r.volume, view);
  const why = typeof state === 'string' ? state : guard(r.pool, r.sizeBytes, view, r.force);
  if (why) return refuse(why);
  const img = `${r.pool}/${r.volume}`;
  const old = view.imageSize ?? imageSizeOf((state as VolumeState).stats);
  const undo = old !== undefined && old < r.sizeBytes
    ? { what: `volume "${img}" resized back to ${formatBytes(old)}`, run: rbd('resize', '--allow-shrink', '--size', bytesArg(old), img) }
    : undefined;
  return plan({
    steps: [{ what: `resizing volume "${img}"`, run: rbd('resize', '--size', bytesArg(r.sizeBytes), img), ...(undo ? { undo } : {}) }],
    reads: [rbd('info', img)],
    change: ([info]) => change({ set: [[volumeKeys(r.pool, r.volume).stats.path, JSON.stringify(info)]] }),
    done: `Resized RBD volume "${img}" to size ${formatBytes(r.sizeBytes)}`,
  });
}

/** `volume rename`: `rbd rename`, then the object and its snapshots under the new name (renamed back on failure). */
export function planVolumeRename(r: Req<'volume.rename'>, view: StorageView): Planned {
  const state = existing(r.pool, r.volume, view);
  const why = typeof state === 'string' ? state : absent(r.pool, r.newName, view);
  if (why) return refuse(why);
  const [from, to] = [`${r.pool}/${r.volume}`, `${r.pool}/${r.newName}`];
  return plan({
    steps: [{ what: `renaming volume "${from}" to "${to}"`, run: rbd('rename', from, to), undo: { what: `volume renamed back to "${from}"`, run: rbd('rename', to, from) } }],
    reads: [rbd('info', to)],
    change: ([info]) => {
      const next = newVolume(r.pool, r.newName, info, (state as VolumeState).snapshots);
      return { ...next, deleteTrees: [...volumeTrees(r.pool, r.volume), ...next.deleteTrees] };
    },
    done: `Renamed RBD volume "${r.volume}" to "${r.newName}" in pool "${r.pool}"`,
  });
}

/** `volume clone`: `rbd copy` (guarded by the source's size), then the new object (the copy removed on failure). */
export function planVolumeClone(r: Req<'volume.clone'>, view: StorageView): Planned {
  const state = existing(r.pool, r.volume, view);
  const size = view.imageSize ?? (typeof state === 'string' ? undefined : imageSizeOf(state.stats));
  const unknown = size === undefined ? `the size of volume "${r.pool}/${r.volume}" is not known` : undefined;
  const why = typeof state === 'string' ? state : absent(r.pool, r.newName, view) ?? unknown ?? guard(r.pool, size ?? 0, view, r.force);
  if (why) return refuse(why);
  const [from, to] = [`${r.pool}/${r.volume}`, `${r.pool}/${r.newName}`];
  return plan({
    steps: [{ what: `copying volume "${from}" to "${to}"`, run: rbdLong('copy', from, to), undo: { what: `volume "${to}" removed`, run: rbdLong('rm', to) } }],
    reads: [rbd('info', to)],
    change: ([info]) => newVolume(r.pool, r.newName, info),
    done: `Cloned RBD volume "${from}" to "${r.newName}" in pool "${r.pool}"`,
  });
}
