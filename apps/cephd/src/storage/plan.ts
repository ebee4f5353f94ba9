/**
 * A storage request as a plan (pure): which planner, and what it needs to see (view.ts reads it).
 *
 * @module
 */
import type { StorageRequest } from '@pvc/zk';
import type { Planned, StorageView } from './plan-types.js';
import { planPoolAdd, planPoolRemove, planPoolSetPgs } from './plan-pool.js';
import { planSnapshotAdd, planSnapshotRemove, planSnapshotRollback } from './plan-snapshot.js';
import { planVolumeAdd, planVolumeClone, planVolumeRemove, planVolumeRename, planVolumeResize } from './plan-volume.js';

/** Besides the pool in Zookeeper, what a request's planner looks at. */
export interface ViewNeeds {
  /** Whether Ceph has a pool of the name, and its CRUSH rules (`pool.add`). */
  readonly cephPools: boolean;
  readonly crushRules: boolean;
  /** The pool's `ceph df` figures (the size guards). */
  readonly df: boolean;
  /** The image's size in Ceph (`rbd info`). */
  readonly imageSize: boolean;
}

/** What `r`'s planner needs beyond the pool in Zookeeper. */
export function viewNeeds(r: StorageRequest): ViewNeeds {
  return {
    cephPools: r.op === 'pool.add',
    crushRules: r.op === 'pool.add' && r.tier !== 'default',
    df: r.op === 'volume.add' || r.op === 'volume.resize' || r.op === 'volume.clone',
    imageSize: r.op === 'volume.resize' || r.op === 'volume.clone',
  };
}

/** The plan of `r` against `view`, or why it is refused before anything runs. */
export function planRequest(r: StorageRequest, view: StorageView): Planned {
  switch (r.op) {
    case 'pool.add':
      return planPoolAdd(r, view);
    case 'pool.remove':
      return planPoolRemove(r, view);
    case 'pool.set-pgs':
      return planPoolSetPgs(r, view);
    case 'volume.add':
      return planVolumeAdd(r, view);
    case 'volume.remove':
      return planVolumeRemove(r, view);
    case 'volume.resize':
      return planVolumeResize(r, view);
    case 'volume.rename':
      return planVolumeRename(r, view);
    case 'volume.clone':
      return planVolumeClone(r, view);
    case 'snapshot.add':
      return planSnapshotAdd(r, view);
    case 'snapshot.remove':
      return planSnapshotRemove(r, view);
    case 'snapshot.rollback':
      return planSnapshotRollback(r, view);
  }
}
