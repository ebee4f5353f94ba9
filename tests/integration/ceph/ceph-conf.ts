// The ceph.conf of the one-host Ceph (ceph-host.ts): everything under `dir`, no authentication,
// one replica, the OSD's bluestore block a sparse file outside its data dir (inside it fails with ELOOP).

/** What the conf depends on. */
export interface CephConfInput {
  dir: string;
  fsid: string;
  monIp: string;
}

/** ceph.conf text for a one-mon, one-OSD cluster in `dir`. */
export function cephConf({ dir, fsid, monIp }: CephConfInput): string {
  return `[global]
fsid = ${fsid}
mon host = [v2:${monIp}:3300,v1:${monIp}:6789]
mon initial members = a
public network = ${monIp.replace(/\.\d+$/, '.0')}/24
auth cluster required = none
auth service required = none
auth client required = none
osd pool default size = 1
osd pool default min size = 1
osd crush chooseleaf type = 0
mon allow pool delete = true
mon warn on pool no redundancy = false
mon warn on insecure global id reclaim allowed = false
run dir = ${dir}/run
log file = ${dir}/log/ceph-$name.log
mon data = ${dir}/mon/ceph-$id
osd data = ${dir}/osd/ceph-$id
mgr data = ${dir}/mgr/ceph-$id
keyring = /dev/null

[mon]
admin socket = ${dir}/run/$name.asok
mon data avail warn = 1
mon data avail crit = 0

[osd]
admin socket = ${dir}/run/$name.asok
osd objectstore = bluestore
bluestore block path = ${dir}/osd-0.block
bluestore block create = true
bluestore block size = 4294967296
bluestore fsck on mount = false
osd memory target = 939524096

[mgr]
admin socket = ${dir}/run/$name.asok

[client]
admin socket =
log file = ${dir}/log/client.log
`;
}
