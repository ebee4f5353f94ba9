import type { Command } from 'commander';
import { notYetGroup } from './common.js';

/**
 * `pvc storage`: the original's command names, each of which says that the capability is not
 * there yet. They will be filled in as cephd exposes Ceph. (`pvc network` is in network.ts.)
 */
export function registerStorage(program: Command): void {
  notYetGroup(program, 'storage', 'Ceph status, OSDs, pools, volumes and snapshots',
    'Ceph storage management is not available yet: cephd only flushes RBD locks in this release', ['status', 'util', 'benchmark', 'osd', 'pool', 'volume']);
}
