// ceph.conf for the test Ceph clusters (Ceph 16): the one-host Ceph of the integration tier
// (tests/integration/ceph/ceph-host.ts) and the multi-host Ceph of the cluster harness
// (tests/cluster/harness/ceph.ts). No authentication (`auth … = none`: clients, QEMU and libvirt need
// no keyring or secret), bluestore OSDs whose block device is a sparse file *outside* the OSD data
// dir (a file inside it fails with ELOOP; ../shared/design/environment.md).

/** One monitor: its id (the node name in the cluster) and address. */
export interface CephMon {
  readonly name: string;
  readonly ip: string;
}

/** Where the daemons keep their files (in the cluster harness: per-host dirs bind-mounted over Ceph's defaults). */
export interface CephPaths {
  /** `<data>/{mon,osd,mgr}/ceph-$id`; each OSD's block file is `<data>/osd/ceph-$id.block`. */
  readonly data: string;
  /** Admin sockets (`run dir`). */
  readonly run: string;
  /** Daemon logs `<log>/ceph-$name.log` and the clients' `<log>/client.log`. */
  readonly log: string;
}

/** Failure-detection timings (seconds); see {@link FAST_FAILURE}. */
export interface CephTimings {
  readonly osdHeartbeatInterval: number;
  readonly osdHeartbeatGrace: number;
  readonly monOsdMinDownReporters: number;
  readonly monLease: number;
  readonly monElectionTimeout: number;
  readonly monClientHuntInterval: number;
  readonly monClientPingInterval: number;
  readonly monClientPingTimeout: number;
  readonly paxosProposeInterval: number;
  readonly monClientHuntBackoff: number;
  readonly osdMonReportInterval: number;
  readonly objecterTickInterval: number;
  readonly objecterTimeout: number;
}

/**
 * The test cluster's fast failure detection (Ceph's defaults in brackets): a peer OSD pings every
 * 1 s [6] and reports an OSD that has not answered for 3 s [20] (`osd heartbeat grace`, also the
 * mon's bar for acting on reports); one reporter is enough [2] (with 3 hosts and one dead, the
 * dead OSD's two peers report anyway; a cut-off host's own reports cannot reach a mon); the mon
 * does not stretch the grace for OSDs with a laggy history (`mon osd adjust heartbeat grace` off).
 * A mon lease of 1 s [5] (peons and the leader notice a dead mon after 2 s instead of 10) and a 1 s
 * election timeout [5] let the survivors re-form their quorum — needed to commit "OSD down" — in
 * ~3 s; clients (librbd in QEMU, rbd, the OSDs' own mon sessions) ping their mon every 1 s [10],
 * give it up after 3 s [30] and hunt for another every 1 s [3]. The mons batch map changes for
 * 0.1 s [1] before proposing them: "OSD down", then each PG primary's `up_thru` (a PG peers anew
 * after the down and takes I/O only once its primary's up_thru is in a committed map), are two
 * commits on the failover path.
 */
export const FAST_FAILURE: CephTimings = Object.freeze({
  osdHeartbeatInterval: 1,
  osdHeartbeatGrace: 3,
  monOsdMinDownReporters: 1,
  monLease: 1,
  monElectionTimeout: 1,
  monClientHuntInterval: 1,
  monClientPingInterval: 1,
  monClientPingTimeout: 3,
  paxosProposeInterval: 0.1,
  monClientHuntBackoff: 1,
  osdMonReportInterval: 1,
  objecterTickInterval: 1,
  objecterTimeout: 2,
});

/** What a ceph.conf depends on. */
export interface CephConfOptions {
  readonly fsid: string;
  readonly mons: readonly CephMon[];
  /** The network every daemon binds in, e.g. `10.200.5.0/24`. */
  readonly publicNetwork: string;
  readonly paths: CephPaths;
  /** Pool defaults: replicas and the fewest replicas that still take I/O. */
  readonly poolSize: number;
  readonly poolMinSize: number;
  /** CRUSH failure domain: 0 = OSD (one host), 1 = host (one replica per host). */
  readonly chooseleafType: 0 | 1;
  /** Each daemon's own address (`[osd.N]` / `[mgr.X]` sections): pins it when the host has more than one address in the public network (a floating address). */
  readonly daemonAddrs?: Readonly<Record<string, string>>;
  /** Size of each OSD's sparse block file (default 4 GiB). */
  readonly blockBytes?: number;
  /** Failure-detection timings (default: Ceph's own). */
  readonly timings?: CephTimings;
}

function timingLines(t: CephTimings | undefined): string[] {
  if (!t) return [];
  return [
    `osd heartbeat interval = ${t.osdHeartbeatInterval}`,
    `osd heartbeat grace = ${t.osdHeartbeatGrace}`,
    'osd fast fail on connection refused = true',
    `mon osd min down reporters = ${t.monOsdMinDownReporters}`,
    'mon osd adjust heartbeat grace = false',
    'mon osd adjust down out interval = false',
    `mon lease = ${t.monLease}`,
    `mon election timeout = ${t.monElectionTimeout}`,
    `mon client hunt interval = ${t.monClientHuntInterval}`,
    `mon client ping interval = ${t.monClientPingInterval}`,
    `mon client ping timeout = ${t.monClientPingTimeout}`,
    `paxos propose interval = ${t.paxosProposeInterval}`,
    `mon client hunt interval backoff = ${t.monClientHuntBackoff}`,
    `osd mon report interval = ${t.osdMonReportInterval}`,
    `objecter tick interval = ${t.objecterTickInterval}`,
    `objecter timeout = ${t.objecterTimeout}`,
  ];
}

/** `mon host` value: every mon's msgr2 and msgr1 address. */
export function monHost(mons: readonly CephMon[]): string {
  return mons.map((m) => `[v2:${m.ip}:3300,v1:${m.ip}:6789]`).join(',');
}

/** ceph.conf text (see the module doc). */
export function cephConf(o: CephConfOptions): string {
  const { data, run, log } = o.paths;
  const sections = Object.entries(o.daemonAddrs ?? {}).map(([daemon, ip]) => `[${daemon}]\npublic addr = ${ip}\ncluster addr = ${ip}\n`);
  return `[global]
fsid = ${o.fsid}
mon host = ${monHost(o.mons)}
mon initial members = ${o.mons.map((m) => m.name).join(',')}
public network = ${o.publicNetwork}
cluster network = ${o.publicNetwork}
ms bind ipv6 = false
auth cluster required = none
auth service required = none
auth client required = none
osd pool default size = ${o.poolSize}
osd pool default min size = ${o.poolMinSize}
osd pool default pg autoscale mode = off
osd crush chooseleaf type = ${o.chooseleafType}
mon allow pool delete = true
mon warn on pool no redundancy = false
mon warn on insecure global id reclaim allowed = false
${timingLines(o.timings).join('\n')}
run dir = ${run}
log file = ${log}/ceph-$name.log
mon data = ${data}/mon/ceph-$id
osd data = ${data}/osd/ceph-$id
mgr data = ${data}/mgr/ceph-$id
keyring = /dev/null

[mon]
admin socket = ${run}/$name.asok
mon data avail warn = 1
mon data avail crit = 0

[osd]
admin socket = ${run}/$name.asok
osd objectstore = bluestore
bluestore block path = ${data}/osd/ceph-$id.block
bluestore block create = true
bluestore block size = ${o.blockBytes ?? 4 * 1024 ** 3}
bluestore fsck on mount = false
osd memory target = 939524096

[mgr]
admin socket = ${run}/$name.asok

[client]
admin socket =
log file = ${log}/client.log

${sections.join('\n')}`;
}
