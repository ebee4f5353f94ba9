/**
 * The validated, frozen configuration of one node. Property names follow `pvcnoded.yaml`
 * (snake_case) below the `pvc` root; derived values are camelCase at the top level.
 *
 * @module
 */

/** VM placement algorithm for migrations (`system.migration.target_selector`). */
export type TargetSelector = 'mem' | 'memprov' | 'vcpus' | 'load' | 'vms';

/** What to do with a fenced node's VMs; the file's `None` is normalised to `'none'`. */
export type FenceAction = 'migrate' | 'none';

/** Libvirt domain type: `kvm` on real hardware, `qemu` (TCG) when KVM is unavailable. */
export type HypervisorDomainType = 'kvm' | 'qemu';

/** The three cluster networks every node knows. */
export type NetworkName = 'upstream' | 'cluster' | 'storage';

/** The list of {@link NetworkName}s in file order. */
export const NETWORK_NAMES: readonly NetworkName[] = Object.freeze(['upstream', 'cluster', 'storage']);

/** A node network `address` as written: no address, the node-number address, or a static one. */
export type AddressSpec =
  | { readonly kind: 'none' }
  | { readonly kind: 'by-id' }
  | { readonly kind: 'static'; readonly cidr: string };

/** The address this node puts on a network interface. */
export interface ResolvedAddress {
  /** Dotted-quad address, e.g. `10.255.0.1`. */
  readonly ip: string;
  /** Prefix length of the cluster network (by-id) or of the static value. */
  readonly prefix: number;
  /** `ip/prefix`. */
  readonly cidr: string;
}

/** `cluster.networks.<name>`: a cluster-wide network. */
export interface ClusterNetwork {
  /** DNS domain of the network, or null for `None`. */
  readonly domain: string | null;
  /** The network block, e.g. `10.255.0.0/24` (no host bits set). */
  readonly network: string;
  /** The primary coordinator's floating address with prefix, inside `network`. */
  readonly floating_ip: string;
  /** Gateway address, usually only on `upstream`. */
  readonly gateway?: string | undefined;
}

/** A PostgreSQL connection used by coordinator services. `pass` is secret. */
export interface DatabaseSettings {
  readonly host: string;
  readonly port: number;
  readonly name: string;
  readonly user: string;
  readonly pass: string;
}

/** `system.configuration.networking.<name>`: this node's interface on a cluster network. */
export interface NodeNetwork {
  readonly device: string;
  readonly mtu: number;
  /** The `address` as written. */
  readonly address: AddressSpec;
  /**
   * The address actually used: `by-id` resolved against `cluster.networks.<name>.network`, the
   * static value parsed, or null for `None` (and for `by-id` when that network is not configured).
   */
  readonly resolved: ResolvedAddress | null;
}

/** One SR-IOV physical function. */
export interface SriovDevice {
  readonly phy: string;
  readonly mtu?: number | undefined;
  readonly vfcount?: number | undefined;
}

/** `system.configuration.networking`. */
export interface NodeNetworking {
  readonly bridge_device?: string | undefined;
  /** Absent means: keep the bridge device's live MTU. */
  readonly bridge_mtu?: number | undefined;
  /** Defaults to false. */
  readonly sriov_enable: boolean;
  /** Defaults to an empty list. */
  readonly sriov_device: readonly SriovDevice[];
  readonly upstream: NodeNetwork;
  readonly cluster: NodeNetwork;
  readonly storage: NodeNetwork;
}

/** `system.fencing`. */
export interface FencingSettings {
  readonly intervals: {
    /** Seconds between keepalives (≥ 1). */
    readonly keepalive_interval: number;
    /** Missed keepalives before a node is fenced; 0 disables fencing. */
    readonly fence_intervals: number;
    /** Missed keepalives before a node resets itself; 0 (the default) disables. */
    readonly suicide_intervals: number;
  };
  readonly actions: { readonly successful_fence: FenceAction; readonly failed_fence: FenceAction };
  /** This node's IPMI interface. `pass` is secret. `port` (our addition) defaults to 623. */
  readonly ipmi: { readonly host: string; readonly user: string; readonly pass: string; readonly port: number };
  /**
   * Our addition: the command (run through `sh -c`) a node uses to reset itself when it has been
   * cut off for `suicide_intervals`. Absent: the kernel's immediate reboot (`/proc/sysrq-trigger`).
   */
  readonly suicide_command?: string | undefined;
  /**
   * Our addition (absent in the original's config): the TCP port of the suicide peer check. Before
   * a node resets itself for lost keepalives it asks the coordinators' keepaliled on this port
   * whether they reach Zookeeper; when most of them cannot either, the outage is global and it does
   * not reset. Coordinators serve it on the address their node name resolves to, only while
   * `suicide_intervals` ≥ 1. Default 7374; 0 turns the check off (suicide as before).
   */
  readonly peer_check_port: number;
}

/**
 * `system.metrics` (our addition; the original's API served the metrics on its own port): where
 * keepaliled serves Prometheus metrics (`/metrics`, `/metrics/health`, `/metrics/resource`).
 */
export interface MetricsSettings {
  /** The IPv4 address to listen on; defaults to `127.0.0.1` (never a public address unless set). */
  readonly listen_address: string;
  /** The TCP port; 0 (the default) serves no metrics. */
  readonly port: number;
}

/** `system.configuration.hypervisor` (our addition; the whole section is optional). */
export interface HypervisorSettings {
  /** Defaults to `kvm`. */
  readonly domain_type: HypervisorDomainType;
  /** Defaults to `qemu+tcp://<node>/system`. */
  readonly libvirt_uri: string;
  /** Seconds a VM gets to shut down cleanly; defaults to 180. */
  readonly vm_shutdown_timeout: number;
}

/** `system.configuration`. */
export interface SystemConfiguration {
  readonly directories: {
    /** Defaults to `/usr/share/pvc/plugins`. */
    readonly plugin_directory: string;
    readonly dynamic_directory: string;
    readonly log_directory: string;
    readonly console_log_directory: string;
  };
  readonly logging: {
    readonly file_logging: boolean;
    readonly stdout_logging: boolean;
    readonly log_colours: boolean;
    readonly log_dates: boolean;
    readonly log_keepalives: boolean;
    readonly log_keepalive_cluster_details: boolean;
    /** Defaults to true. */
    readonly log_keepalive_plugin_details: boolean;
    /** Older files' name for storage details in keepalive logs; defaults to true. */
    readonly log_keepalive_storage_details: boolean;
    readonly console_log_lines: number;
    /** Also append log lines to `/logs/<node>/messages` in Zookeeper; defaults to true. */
    readonly zookeeper_logging: boolean;
    /** Lines kept in `/logs/<node>/messages` (0 = no Zookeeper log); defaults to 2000. */
    readonly node_log_lines: number;
  };
  /** Present whenever `functions.enable_networking` is true. */
  readonly networking?: NodeNetworking | undefined;
  readonly hypervisor: HypervisorSettings;
  /** Our addition: seconds between node health plugin runs; defaults to 15 (the original's pvchealthd). */
  readonly monitoring_interval: number;
}

/** The validated configuration of this node: the `pvc` mapping of `pvcnoded.yaml` plus derived values. */
export interface Config {
  /** Where the configuration was read from (a file path, or the name given to `parseConfig`). */
  readonly source: string;
  /** This node's short hostname. */
  readonly node: string;
  readonly debug: boolean;
  readonly functions: {
    readonly enable_hypervisor: boolean;
    readonly enable_networking: boolean;
    readonly enable_storage: boolean;
    /** Defaults to false. */
    readonly enable_api: boolean;
  };
  readonly cluster: {
    /** Non-empty, no duplicates. */
    readonly coordinators: readonly string[];
    /** Present whenever `functions.enable_networking` is true. */
    readonly networks?: Readonly<Record<NetworkName, ClusterNetwork>> | undefined;
  };
  /** Present whenever `functions.enable_networking` is true. */
  readonly coordinator?:
    | { readonly dns: { readonly database: DatabaseSettings }; readonly metadata: { readonly database: DatabaseSettings } }
    | undefined;
  /** Our addition: `database.zookeeper.port` defaults to 2181. */
  readonly database: { readonly zookeeper: { readonly port: number } };
  readonly system: {
    readonly fencing: FencingSettings;
    readonly migration: { readonly target_selector: TargetSelector };
    readonly configuration: SystemConfiguration;
    readonly metrics: MetricsSettings;
  };
  /** Whether `node` is listed in `cluster.coordinators`. */
  readonly isCoordinator: boolean;
  /** `coordinator` when {@link Config.isCoordinator}, else `hypervisor` (the original's daemon mode). */
  readonly mode: 'coordinator' | 'hypervisor';
  /** The coordinators as `host:port` joined by commas, for the ZooKeeper client. */
  readonly zkConnectString: string;
  /** The trailing digits of `node` (`pvchv3` → 3), or null when it has none. */
  readonly nodeId: number | null;
}
