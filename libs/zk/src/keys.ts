import {
  bool, commaList, emptyOr, float, int, json, localTime, lowerOneOf, nodeOrNone, nullable, oneOf, runningDomains,
  spaceList, staticData, strtobool, text, vniList,
} from './codec.js';
import type { StaticData } from './codec.js';
import { NODE_OWN_KEYS, paths } from './schema.js';
import { osdKeys, poolKeys } from './ceph-keys.js';
import { keySpec, type KeySpec } from './key-spec.js';

export { keySpec, pair } from './key-spec.js';
export type { KeySpec, KeyValue } from './key-spec.js';
export { cephKeys, osdKeys, poolKeys, POOL_TIERS, snapshotKeys, volumeKeys, volumePoolKeys, snapshotPoolKeys, snapshotVolumeKeys } from './ceph-keys.js';
export type { PoolTier } from './ceph-keys.js';
import {
  DAEMON_MODES, DAEMON_STATES, FAULT_STATUSES, MIGRATION_METHODS, NETWORK_TYPES, NODE_DOMAIN_STATES, ROUTER_STATES,
  SELECTORS, VM_SELECTORS, VM_STATES,
} from './vocab.js';
import type {
  DaemonMode, DaemonState, FaultStatus, MigrationMethod, NetworkType, NodeDomainState, RouterState, Selector, VmSelector,
  VmState,
} from './vocab.js';

const key = keySpec;

const daemonState = oneOf(DAEMON_STATES);
const routerState = oneOf(ROUTER_STATES);
const nodeDomainState = oneOf(NODE_DOMAIN_STATES);
const vmState = oneOf(VM_STATES);

/** Cluster-wide keys (`/schema`, `/config`). */
export const clusterKeys = {
  schemaVersion: key(paths.schema.version, int, 0),
  /** The cluster name (root of `/config`). */
  name: key(paths.config.root, text, ''),
  /**
   * `true`/`false` as the API writes it; read with Python's `strtobool` (any case of
   * y/yes/t/true/on/1), as the original's node daemon does. keepaliled (fencing, faults) and the
   * CLI read it only through this key.
   */
  maintenance: key(paths.config.maintenance, strtobool, false, 'false'),
  primaryNode: key(paths.config.primaryNode, nodeOrNone, 'none'),
  /** The upstream floating address with its prefix, e.g. `10.0.0.254/24`. */
  upstreamIp: key(paths.config.upstreamIp, text, ''),
  migrationTargetSelector: key<Selector>(paths.config.migrationTargetSelector, lowerOneOf(SELECTORS), 'mem'),
} as const;

/** The keys of `/nodes/<name>`. */
export function nodeKeys(name: string) {
  const p = paths.node(name);
  return {
    root: key<DaemonMode, undefined>(p.root, oneOf(DAEMON_MODES), undefined),
    keepalive: key(p.keepalive, int, 0),
    daemonMode: key<DaemonMode, undefined>(p.daemonMode, oneOf(DAEMON_MODES), undefined),
    activeSchema: key(p.activeSchema, int, 0),
    latestSchema: key(p.latestSchema, int, 0),
    staticData: key<StaticData, undefined>(p.staticData, staticData, undefined),
    pvcVersion: key(p.pvcVersion, text, ''),
    runningDomains: key(p.runningDomains, runningDomains, [] as string[]),
    domainsCount: key(p.domainsCount, int, 0),
    networksCount: key(p.networksCount, int, 0),
    daemonState: key<DaemonState, undefined>(p.daemonState, daemonState, undefined),
    routerState: key<RouterState, undefined>(p.routerState, routerState, undefined),
    domainState: key<NodeDomainState, undefined>(p.domainState, nodeDomainState, undefined),
    cpuLoad: key(p.cpuLoad, float, 0),
    vcpuAlloc: key(p.vcpuAlloc, int, 0),
    memTotal: key(p.memTotal, int, 0),
    memUsed: key(p.memUsed, int, 0),
    memFree: key(p.memFree, int, 0),
    memAlloc: key(p.memAlloc, int, 0),
    memProv: key(p.memProv, int, 0),
    ipmiHostname: key(p.ipmiHostname, text, ''),
    ipmiUsername: key(p.ipmiUsername, text, ''),
    ipmiPassword: key(p.ipmiPassword, text, ''),
    sriov: key(p.sriov, text, ''),
    sriovPf: key(p.sriovPf, text, ''),
    sriovVf: key(p.sriovVf, text, ''),
    monitoringPlugins: key(p.monitoringPlugins, spaceList, [] as string[]),
    monitoringData: key(p.monitoringData, text, ''),
    /** 0–100, or `None` (no health: the health monitor stopped, the node was fenced). */
    monitoringHealth: key<number | null>(p.monitoringHealth, nullable(int), null),
    networkStats: key<unknown>(p.networkStats, json, {}),
    /**
     * Ours, not in schema v15 (`NODE_OWN_KEYS`): the VNIs whose `vmbr<N>` bridge is up on the node,
     * written by its netd. Absent (or unreadable) = unknown: an original node, or one without
     * networking; placement then does not check networks on it. `""` = none.
     */
    networksUp: key<number[], undefined>(p.networksUp, vniList, undefined),
  } as const;
}

/** The keys of `/nodes/<n>/monitoring_data/<plugin>`. */
export function pluginKeys(node: string, plugin: string) {
  const p = paths.node(node).monitoringPlugin(plugin);
  return {
    root: key(p.root, text, ''),
    lastRun: key(p.lastRun, int, 0),
    healthDelta: key(p.healthDelta, int, 0),
    message: key(p.message, text, ''),
    data: key<unknown>(p.data, json, {}),
    runtime: key(p.runtime, text, '0.00'),
  } as const;
}

/** The keys of `/domains/<uuid>`. */
export function domainKeys(uuid: string) {
  const p = paths.domain(uuid);
  return {
    /** The VM's name. */
    root: key(p.root, text, ''),
    xml: key(p.xml, text, ''),
    state: key<VmState, undefined>(p.state, vmState, undefined),
    profile: key<string | null>(p.profile, nullable(text), null),
    /** The original's stats JSON (see `VmStats`); `""` until first written. */
    stats: key<unknown, null>(p.stats, json, null),
    node: key(p.node, text, ''),
    /** `""` or the node to return to. */
    lastNode: key(p.lastNode, text, ''),
    failedReason: key(p.failedReason, text, ''),
    rbdList: key(p.rbdList, commaList, [] as string[]),
    consoleLog: key(p.consoleLog, text, ''),
    vnc: key(p.vnc, text, ''),
    nodeAutostart: key(p.nodeAutostart, bool, false),
    migrationMethod: key<MigrationMethod>(p.migrationMethod, lowerOneOf(MIGRATION_METHODS), 'none'),
    migrationMaxDowntime: key(p.migrationMaxDowntime, int, 300, '300'),
    nodeSelector: key<VmSelector>(p.nodeSelector, lowerOneOf(VM_SELECTORS), 'none'),
    nodeLimit: key(p.nodeLimit, commaList, [] as string[]),
    tags: key(p.tags, text, ''),
    migrateSyncLock: key(p.migrateSyncLock, text, ''),
    snapshots: key(p.snapshots, text, ''),
  } as const;
}

/** The keys of `/domains/<uuid>/tags/<tag>`. */
export function tagKeys(uuid: string, tag: string) {
  const p = paths.domain(uuid).tag(tag);
  return { root: key(p.root, text, ''), type: key(p.type, text, 'user'), protected: key(p.protected, bool, false) } as const;
}

/** The keys of `/networks/<vni>`. */
export function networkKeys(vni: string | number) {
  const p = paths.network(vni);
  const none = nullable(text);
  return {
    /** The description (unique). */
    root: key(p.root, text, ''),
    type: key<NetworkType, undefined>(p.type, oneOf(NETWORK_TYPES), undefined),
    /** Empty = the node fills in the maximum. */
    mtu: key<number | null>(p.mtu, emptyOr(int), null),
    domain: key(p.domain, text, ''),
    nameServers: key(p.nameServers, commaList, [] as string[]),
    ip4Network: key<string | null>(p.ip4Network, none, null),
    ip4Gateway: key<string | null>(p.ip4Gateway, none, null),
    ip6Network: key<string | null>(p.ip6Network, none, null),
    ip6Gateway: key<string | null>(p.ip6Gateway, none, null),
    dhcp4Flag: key(p.dhcp4Flag, bool, false),
    dhcp6Flag: key(p.dhcp6Flag, bool, false),
    dhcp4Start: key<string | null>(p.dhcp4Start, none, null),
    dhcp4End: key<string | null>(p.dhcp4End, none, null),
    reservations: key(p.reservations, text, ''),
    leases: key(p.leases, text, ''),
    firewallRules: key(p.firewallRules, text, ''),
    firewallIn: key(p.firewallIn, text, ''),
    firewallOut: key(p.firewallOut, text, ''),
  } as const;
}

/** The keys of `/logs/<node>`: `messages` = the node's daemon log lines, newline-joined. */
export function logKeys(node: string) {
  const p = paths.logs.node(node);
  return { root: key(p.root, text, ''), messages: key(p.messages, text, '') } as const;
}

/** The keys of `/faults/<id>`. Times are local wall-clock times, as the original writes them. */
export function faultKeys(id: string) {
  const p = paths.faults.fault(id);
  return {
    root: key(p.root, text, ''),
    firstTime: key<number, undefined>(p.firstTime, localTime, undefined),
    lastTime: key<number, undefined>(p.lastTime, localTime, undefined),
    /** `""` until acknowledged. */
    ackTime: key<number | null>(p.ackTime, emptyOr(localTime), null),
    status: key<FaultStatus>(p.status, oneOf(FAULT_STATUSES), 'new'),
    delta: key(p.delta, int, 0),
    message: key(p.message, text, ''),
  } as const;
}

type AnyKeys = Readonly<Record<string, KeySpec<unknown, unknown>>>;

/**
 * The keys an object of each kind consists of in schema v15, for the start-up fill of missing
 * keys (the original's schema validation covers nodes, VMs, networks, OSDs and pools). The root
 * itself is not listed; parents come before their children.
 */
export const objectKeys = {
  // Our own keys are left out: absent means unknown, so they are never filled.
  node: (name: string): AnyKeys => without(withoutRoot(nodeKeys(name)), Object.keys(NODE_OWN_KEYS)),
  domain: (uuid: string): AnyKeys => withoutRoot(domainKeys(uuid)),
  network: (vni: string): AnyKeys => withoutRoot(networkKeys(vni)),
  osd: (id: string): AnyKeys => withoutRoot(osdKeys(id)),
  pool: (name: string): AnyKeys => withoutRoot(poolKeys(name)),
} as const;

function withoutRoot(keys: AnyKeys): AnyKeys {
  return Object.fromEntries(Object.entries(keys).filter(([name]) => name !== 'root'));
}

function without(keys: AnyKeys, names: readonly string[]): AnyKeys {
  return Object.fromEntries(Object.entries(keys).filter(([name]) => !names.includes(name)));
}
