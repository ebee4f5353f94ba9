import { join } from 'node:path';
import { cephConf, FAST_FAILURE } from '../../support/ceph/ceph-conf.js';
import type { HostPlan, NetworkPlan } from './plan.js';
import { stableUuid } from './plan.js';

/** One Ceph daemon placed on a host. */
export interface CephDaemonPlan {
  /** mon/mgr id = the host name (as `ceph-mon@<node>.service`); OSD id = host index − 1. */
  readonly name: string;
  readonly host: string;
  /** The host's storage address, where the daemon listens. */
  readonly ip: string;
}

/** One OSD: its id, host, address and the uuid given to `ceph osd new` and `ceph-osd --mkfs`. */
export interface CephOsdPlan {
  readonly id: number;
  readonly host: string;
  readonly ip: string;
  readonly uuid: string;
}

/** The cluster's Ceph, derived from the cluster plan (no I/O). */
export interface CephPlan {
  readonly fsid: string;
  /** The RBD pool the VMs' disks live in. */
  readonly pool: string;
  readonly pgs: number;
  /** Replicas and min_size of every pool (see planCeph). */
  readonly size: number;
  readonly minSize: number;
  /** `<workDir>/ceph`: the monmap, the root namespace's client log. */
  readonly dir: string;
  /** Bind-mounted over /etc/ceph inside every host. */
  readonly etcDir: string;
  /** `<etcDir>/ceph.conf`: what every host sees as /etc/ceph/ceph.conf. */
  readonly confPath: string;
  /** The storage /24, e.g. 10.200.5.0/24. */
  readonly publicNetwork: string;
  /** A mon on every coordinator (the monmap of the first bring-up). */
  readonly mons: readonly CephDaemonPlan[];
  /** A mgr on every coordinator (one active, the others standby). */
  readonly mgrs: readonly CephDaemonPlan[];
  /** One OSD per host. */
  readonly osds: readonly CephOsdPlan[];
}

/** Where the daemons' files are inside a host (per-host directories bind-mounted there). */
export const CEPH_HOST_PATHS = Object.freeze({ data: '/var/lib/ceph', run: '/run/ceph', log: '/var/log/ceph' });

/**
 * Plans the Ceph of a cluster: mons and mgrs on the coordinators (the ZK hosts: the mon quorum
 * survives one host's death like the ZK quorum), one OSD per host, pool `vms` with 3 replicas and
 * min_size 2 when there are ≥ 3 hosts (one per host, CRUSH failure domain host: a dead host leaves 2
 * replicas and I/O goes on; 2 = PVC's own default `mincopies`), fewer hosts → size = hosts, min_size
 * = size − 1 (≥ 1).
 */
export function planCeph(clusterName: string, workDir: string, storage: NetworkPlan, hosts: readonly HostPlan[]): CephPlan {
  const dir = join(workDir, 'ceph');
  const etcDir = join(dir, 'etc');
  const daemon = (h: HostPlan): CephDaemonPlan => ({ name: h.name, host: h.name, ip: h.ips.storage });
  const coordinators = hosts.filter((h) => h.coordinator);
  const size = Math.min(3, hosts.length);
  return Object.freeze({
    fsid: stableUuid(`pvc-cluster/${clusterName}/ceph`),
    pool: 'vms',
    pgs: 16,
    size,
    minSize: Math.max(1, size - 1),
    dir,
    etcDir,
    confPath: join(etcDir, 'ceph.conf'),
    publicNetwork: `${storage.prefix}.0/24`,
    mons: coordinators.map(daemon),
    mgrs: coordinators.map(daemon),
    osds: hosts.map((h) => ({ id: h.index - 1, host: h.name, ip: h.ips.storage, uuid: stableUuid(`pvc-cluster/${clusterName}/osd/${h.index - 1}`) })),
  });
}

/**
 * The cluster's ceph.conf: no auth, the hosts' own Ceph directories, each OSD and mgr pinned to its
 * host's storage address (the primary also holds the floating storage address in that network),
 * the fast failure detection of the shared conf ({@link FAST_FAILURE}).
 */
export function clusterCephConf(c: CephPlan): string {
  const daemonAddrs: Record<string, string> = {};
  for (const o of c.osds) daemonAddrs[`osd.${o.id}`] = o.ip;
  for (const m of c.mgrs) daemonAddrs[`mgr.${m.name}`] = m.ip;
  return cephConf({
    fsid: c.fsid,
    mons: c.mons.map((m) => ({ name: m.name, ip: m.ip })),
    publicNetwork: c.publicNetwork,
    paths: CEPH_HOST_PATHS,
    poolSize: c.size,
    poolMinSize: c.minSize,
    chooseleafType: c.osds.length > 1 ? 1 : 0,
    daemonAddrs,
    timings: FAST_FAILURE,
  });
}

/** The "<source> <target>" bind mounts of a host with Ceph: the shared /etc/ceph and its own data, logs and sockets. */
export function cephMounts(c: CephPlan, host: HostPlan): string[] {
  return [
    `${c.etcDir} /etc/ceph`,
    `${host.dirs.varLibCeph} ${CEPH_HOST_PATHS.data}`,
    `${host.dirs.varLogCeph} ${CEPH_HOST_PATHS.log}`,
    `${host.dirs.runCeph} ${CEPH_HOST_PATHS.run}`,
  ];
}

/** The systemd unit the supervisor starts → the harness service name (`ceph-mon@hv1.service` → `ceph-mon-hv1`), as the shim maps it. */
export function unitServiceName(unit: string): string {
  return unit.replace(/\.service$/, '').replace(/@/g, '-');
}
