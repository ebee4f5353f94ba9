import type { ExecOptions, ExecResult } from '@pvc/runtime';
import type { CephCluster } from './ceph.js';
import type { GuestDisk } from '../../support/guest/domain-xml.js';

/** The four networks every host is attached to. `ipmi` carries only the BMCs (never cut). */
export type NetworkName = 'cluster' | 'storage' | 'upstream' | 'ipmi';

/** Options of {@link createCluster}; validated and defaulted once into a frozen plan. */
export interface ClusterOptions {
  /** Number of hypervisor hosts (1–9). Default 3. */
  hosts?: number;
  /** The first N hosts also run a Zookeeper server (1, 3 or 5, ≤ hosts). Default min(3, hosts). */
  coordinators?: number;
  /** Prefix of every namespace, link and directory: [a-z][a-z0-9]{0,5}. Default "pvct". */
  name?: string;
  /** Where per-host directories live; removed by destroy(). Default /tmp/pvc-cluster/<name>. */
  workDir?: string;
  /** Guest image cache, kept across runs. Default /var/tmp/pvc-cluster-cache. */
  cacheDir?: string;
  /** Selects the 10.200.x.0/24 subnets (0–63): x = 4·subnet + (0 cluster, 1 storage, 2 upstream, 3 ipmi). Default: from a hash of the name. */
  subnet?: number;
  /** IPMI credentials of every simulated BMC. Default admin / pvc-ipmi. */
  ipmi?: { user: string; pass: string };
  /** Leave the cluster running when this process exits (the CLI's "up"). Default false: exit, SIGINT and SIGTERM tear it down. */
  keepOnExit?: boolean;
  /**
   * Give the hosts bare links: `cluster`, `storage` and `upstream` exist in each host but have no
   * address and are down, as a machine's NICs before its network is configured; the node services'
   * bring-up (libs/hostnet, `pvc-node.ts` turns networking on) makes the bridges and puts the
   * addresses on. The Zookeeper servers then form their quorum only after that bring-up, so
   * `createCluster` does not wait for it; a power-off clears the host's bridges, addresses,
   * ruleset and the sysctls bring-up sets, like a reboot. Default false: the harness puts each
   * host's addresses on those links itself (tests that run no node services).
   */
  bareLinks?: boolean;
  /**
   * A real Ceph 16 (tests/cluster/README.md, "Ceph"): a mon and a mgr on every coordinator — started
   * by the node services' supervisor through the host's systemctl shim, so the caller must run the
   * node services (`startPvc`) —, one bluestore OSD per host started at boot, pool `vms`, the conf
   * as /etc/ceph/ceph.conf inside every host, no auth. `cluster.ceph` is its handle. Default false.
   */
  ceph?: boolean;
  /** Upper bound for bring-up waits (libvirtd answering, ZK quorum), ms. Default 90 000. */
  readyTimeoutMs?: number;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
}

/** How to reach one simulated BMC with ipmitool. */
export interface IpmiEndpoint {
  host: string;
  port: number;
  user: string;
  pass: string;
  /**
   * RMCP+ cipher suite to pass as `ipmitool -C`. ipmi_sim does not implement "Get Channel Cipher
   * Suites", so without `-C 3` every ipmitool call first waits ~10 s for that request to time out.
   */
  cipherSuite: number;
}

/** A long-running process the harness starts inside a host at every power-on. */
export interface ServiceSpec {
  /** [a-z0-9-]+, unique per host; its output goes to `<dirs.log>/<name>.log`. */
  name: string;
  command: string;
  args?: readonly string[];
  env?: Readonly<Record<string, string>>;
  /** Start again at every power-on (like an enabled unit). Default true. */
  onBoot?: boolean;
}

/** Directories of one host, as seen from the root mount namespace. */
export interface HostDirs {
  /** The host's own directory. */
  root: string;
  /** Logs of the host's services, its power switch and its BMC. */
  log: string;
  /** Bind-mounted over /run/libvirt, /var/lib/libvirt, /var/log/libvirt, /var/cache/libvirt, /etc/libvirt inside the host. */
  runLibvirt: string;
  varLibLibvirt: string;
  varLogLibvirt: string;
  varCacheLibvirt: string;
  etcLibvirt: string;
  /** Zookeeper config and data (coordinators only). */
  zk: string;
  /** With Ceph: bind-mounted over /var/lib/ceph (mon, mgr, OSD data and the OSD's block file), /var/log/ceph and /run/ceph. */
  varLibCeph: string;
  varLogCeph: string;
  runCeph: string;
}

/** One simulated hypervisor host. */
export interface ClusterHost {
  readonly name: string;
  readonly index: number;
  readonly netns: string;
  readonly clusterIp: string;
  readonly storageIp: string;
  readonly upstreamIp: string;
  readonly ipmiIp: string;
  readonly coordinator: boolean;
  readonly ipmi: IpmiEndpoint;
  /** qemu+tcp://<clusterIp>/system */
  readonly libvirtUri: string;
  readonly dirs: HostDirs;
  /** Runs a command inside the host (its network, mount, UTS and PID namespaces). Throws HostPoweredOffError when off. */
  exec(cmd: string, args: readonly string[], opts?: ExecOptions): Promise<ExecResult>;
  /**
   * `virsh -c <libvirtUri> …` run inside this host; with bare links `virsh -c qemu:///system …` (the
   * same libvirtd through its local socket: the cluster address exists only after the node's bring-up).
   */
  virsh(args: readonly string[], opts?: ExecOptions): Promise<ExecResult>;
  /** Pulls the plug: SIGKILLs every process of the host (libvirtd, guests, ZK, services). */
  powerOff(): Promise<void>;
  /**
   * Boots the host and its services; with `wait` (default) until libvirtd answers (over TCP; with
   * bare links on its local socket, since TCP needs the node's bring-up).
   */
  powerOn(opts?: { wait?: boolean }): Promise<void>;
  isPoweredOn(): Promise<boolean>;
  /** Makes the host's BMC answer every request `ms` late (0 = at once): a slow BMC. */
  setBmcDelay(ms: number): Promise<void>;
  /**
   * Makes every later power-on start the host's services `ms` late (0 = at once): a firmware POST.
   * The power state is "on" at once. For benches: on one machine, a fenced host that boots at once
   * takes CPU from the hosts whose recovery is measured; a real one boots on its own CPUs.
   */
  setPostDelay(ms: number): Promise<void>;
  /** Takes the host's links down (default cluster, storage, upstream; never ipmi unless named). */
  cutNetwork(nets?: readonly NetworkName[]): Promise<void>;
  restoreNetwork(nets?: readonly NetworkName[]): Promise<void>;
  /** Starts a service now and (unless onBoot false) at every power-on. */
  startService(spec: ServiceSpec): Promise<void>;
  /** Stops a service (SIGTERM) and forgets it for later boots. */
  stopService(name: string): Promise<void>;
  /** Kills a running service (SIGKILL, like a crash) and starts it again now; still started at boot. */
  restartService(name: string): Promise<void>;
  /**
   * Kills a running service (SIGKILL, like a crash) and waits until it is gone; it stays stopped
   * until `restartService` (or the next power-on) starts it again. E.g. a Zookeeper outage.
   */
  killService(name: string): Promise<void>;
  /** Resolves once libvirtd on this host answers over TCP (with bare links: on its local socket). */
  waitForLibvirt(timeoutMs?: number): Promise<void>;
}

/** State of one Zookeeper server as reported by the `srvr` four-letter word. */
export interface ZkServerStatus {
  id: number;
  host: string;
  address: string;
  mode: 'leader' | 'follower' | 'standalone' | 'observer' | 'down';
}

/** The Zookeeper ensemble on the coordinator hosts. */
export interface ZkEnsemble {
  /** "ip:2181,ip:2181,…" */
  readonly connectString: string;
  readonly servers: readonly { id: number; host: string; address: string; clientPort: number }[];
  status(): Promise<ZkServerStatus[]>;
  /** One leader (or a standalone server) and a majority of servers serving. */
  hasQuorum(): Promise<boolean>;
  waitForQuorum(timeoutMs?: number): Promise<void>;
  /** Resolves once every server is leader or follower (e.g. after a coordinator's power-on). */
  waitForAllServing(timeoutMs?: number): Promise<void>;
}

/** Options of {@link GuestImage.domainXml}. */
export interface DomainXmlOptions {
  memoryMiB?: number;
  vcpus?: number;
  /** 'qemu' (TCG, default here: KVM guests hang on these machines) or 'kvm'. */
  domainType?: 'qemu' | 'kvm';
  /** File receiving the serial console. Default <workDir>/consoles/<name>.log (shared by all hosts). */
  consoleLog?: string;
  uuid?: string;
  /** virtio NICs as ports of host bridges: `<interface type='bridge'>` with `<source bridge>`, `<mac>`, virtio model. */
  interfaces?: readonly { bridge: string; mac: string }[];
  /** Raw RBD disks on virtio (vda, vdb, …): `<disk type='network'>` rbd sources; QEMU reads /etc/ceph/ceph.conf of the host (clusters with `ceph: true`). */
  disks?: readonly GuestDisk[];
  /** Appended to the kernel command line: `pvc.net=dhcp`, `pvc.ping=<ip>[,<ip>]`, `pvc.renew=<s>`, `pvc.disk=/dev/vda`, `pvc.marker=write:<text>`, `pvc.diskwrite=<s>` (see tests/support/guest/init.sh). */
  cmdline?: string;
}

/** The tiny bootable guest: Debian's cloud kernel and a busybox initramfs printing a heartbeat. */
export interface GuestImage {
  readonly kernel: string;
  readonly initrd: string;
  readonly kernelVersion: string;
  /** The virtio NIC modules in the initramfs (load order), or why the guest can have no NIC. */
  readonly net: { modules: string[] } | { unavailable: string };
  /** Diskless domain XML for this guest; its console prints `pvc-guest <name> tick <n>` every second. */
  domainXml(name: string, opts?: DomainXmlOptions): string;
  /** The default console log file of a guest. */
  consoleLog(name: string): string;
}

/** A running multi-host cluster on this machine. */
export interface Cluster {
  readonly name: string;
  readonly workDir: string;
  readonly hosts: readonly ClusterHost[];
  readonly zk: ZkEnsemble;
  readonly guest: GuestImage;
  /** Addresses of this (root) namespace on each bridge, to reach hosts from the test process. */
  readonly rootIps: Readonly<Record<NetworkName, string>>;
  /** The hosts have bare links ({@link ClusterOptions.bareLinks}): their node services configure them. */
  readonly bareLinks: boolean;
  /** The cluster's Ceph ({@link ClusterOptions.ceph}), or undefined. */
  readonly ceph: CephCluster | undefined;
  host(name: string): ClusterHost;
  /** Tears down everything it made (processes, namespaces, links, work dir); keeps the guest cache. */
  destroy(): Promise<void>;
}
