/**
 * Snapshot requests as plans (pure): add, remove, rollback (`rbd snap create/rm/rollback`). A
 * snapshot object is its root `""` and `stats` = `rbd info` of the snapshot; the volume's stored
 * `snapshot_count` moves with it, as the original's API adjusts it.
 *
 * @module
 */
import { snapshotKeys, snapshotVolumeKeys, volumeKeys, type StorageRequest } from '@pvc/zk';
import { withSnapshotCount } from './guard.js';
import { change, refuse, type CephCommand, type Planned, type StorageView, type VolumeState } from './plan-types.js';

type SnapReq = Extract<StorageRequest, { op: 'snapshot.add' | 'snapshot.remove' | 'snapshot.rollback' }>;

const rbd = (...args: string[]): CephCommand => ({ tool: 'rbd', args });

function volumeOf(r: SnapReq, view: StorageView): VolumeState | string {
  if (!view.pool) return `no pool "${r.pool}" in the cluster`;
  return view.pool.volumes.get(r.volume) ?? `no volume "${r.volume}" in pool "${r.pool}"`;
}

/** The volume's stats with `snapshot_count` moved, as a `set` (none when the stats have no count). */
function countSet(r: SnapReq, vol: VolumeState, delta: number): [string, string][] {
  const next = withSnapshotCount(vol.stats, delta);
  return next ? [[volumeKeys(r.pool, r.volume).stats.path, JSON.stringify(next)]] : [];
}

/** `snapshot add`: `rbd snap create`, then its object (the snapshot removed if that fails). */
export function planSnapshotAdd(r: SnapReq, view: StorageView): Planned {
  const vol = volumeOf(r, view);
  if (typeof vol === 'string') return refuse(vol);
  if (vol.snapshots.has(r.snapshot)) return refuse(`snapshot "${r.snapshot}" of volume "${r.pool}/${r.volume}" already exists`);
  const spec = `${r.pool}/${r.volume}@${r.snapshot}`;
  const k = snapshotKeys(r.pool, r.volume, r.snapshot);
  const parent: [string, string][] = vol.snapshotParent ? [] : [[snapshotVolumeKeys(r.pool, r.volume).root.path, '']];
  return {
    kind: 'plan',
    plan: {
      steps: [{ what: `creating snapshot "${spec}"`, run: rbd('snap', 'create', spec), undo: { what: `snapshot "${spec}" removed`, run: rbd('snap', 'rm', spec) } }],
      reads: [rbd('info', spec)],
      change: ([info]) => change({ create: [...parent, [k.root.path, ''], [k.stats.path, JSON.stringify(info)]], set: countSet(r, vol, 1) }),
      done: `Created RBD snapshot "${r.snapshot}" of volume "${r.pool}/${r.volume}"`,
    },
  };
}

/** Refusal when the snapshot is not in Zookeeper. */
function snapshotOf(r: SnapReq, view: StorageView): VolumeState | string {
  const vol = volumeOf(r, view);
  if (typeof vol === 'string') return vol;
  return vol.snapshots.has(r.snapshot) ? vol : `no snapshot "${r.snapshot}" of volume "${r.pool}/${r.volume}"`;
}

/** `snapshot remove`: `rbd snap rm` (a snapshot already gone in Ceph counts as removed), then its object. */
export function planSnapshotRemove(r: SnapReq, view: StorageView): Planned {
  const vol = snapshotOf(r, view);
  if (typeof vol === 'string') return refuse(vol);
  const spec = `${r.pool}/${r.volume}@${r.snapshot}`;
  const gone = change({ deleteTrees: [snapshotKeys(r.pool, r.volume, r.snapshot).root.path], set: countSet(r, vol, -1) });
  return {
    kind: 'plan',
    plan: {
      steps: [{ what: `removing snapshot "${spec}"`, run: rbd('snap', 'rm', spec), missingOk: true }],
      reads: [],
      change: () => gone,
      done: `Removed RBD snapshot "${r.snapshot}" of volume "${r.pool}/${r.volume}"`,
    },
  };
}

/** `snapshot rollback`: `rbd snap rollback`; nothing changes in Zookeeper. */
export function planSnapshotRollback(r: SnapReq, view: StorageView): Planned {
  const vol = snapshotOf(r, view);
  if (typeof vol === 'string') return refuse(vol);
  const spec = `${r.pool}/${r.volume}@${r.snapshot}`;
  return {
    kind: 'plan',
    plan: {
      steps: [{ what: `rolling back to snapshot "${spec}"`, run: { tool: 'rbd', args: ['snap', 'rollback', spec], long: true } }],
      reads: [],
      change: () => change({}),
      done: `Rolled back RBD volume "${r.pool}/${r.volume}" to snapshot "${r.snapshot}"`,
    },
  };
}
