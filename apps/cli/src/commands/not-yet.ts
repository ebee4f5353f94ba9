import type { Command } from 'commander';
import { notYetGroup } from './common.js';

/**
 * `pvc network` and `pvc storage`: the original's command names, each of which says that the
 * capability is not there yet. They will be filled in as netd and cephd expose networks and Ceph.
 */
export function registerNetwork(program: Command): void {
  notYetGroup(program, 'network', 'client networks, DHCP and firewall rules',
    'managed networks are not available yet: netd does not manage networks in this release', ['add', 'modify', 'remove', 'info', 'list', 'dhcp', 'acl', 'sriov']);
}

export function registerStorage(program: Command): void {
  notYetGroup(program, 'storage', 'Ceph status, OSDs, pools, volumes and snapshots',
    'Ceph storage management is not available yet: cephd only flushes RBD locks in this release', ['status', 'util', 'benchmark', 'osd', 'pool', 'volume']);
}
