import { bool, commaList, float, int, nullable, pyStr, text } from './codec.js';
import { DOMAIN_KEYS, NETWORK_KEYS, NODE_KEYS, paths, SCHEMA_VERSION, segment } from './schema.js';
import type { ObjectEntry } from './types.js';

/**
 * Whole-object definitions: the keys a new node, VM or network consists of, with their initial
 * values already encoded. Feed them to `ZkClient.createObject(root, entries)` so the object
 * appears in one transaction and no ChildrenWatch ever sees half of it.
 */
export interface ObjectDefinition {
  readonly root: string;
  /** `''` is the root's own value. Relative keys, parents before children. */
  readonly entries: readonly ObjectEntry[];
}

/** Inputs of a new node registration. */
export interface NewNodeInput {
  name: string;
  daemonMode: 'coordinator' | 'hypervisor';
  /** Clock time in ms; the keepalive is written as whole epoch seconds. */
  nowMs: number;
  /** Already joined `"<cpus> <kernel> <os> <arch>"` (see the `staticData` codec). */
  staticData: string;
  pvcVersion: string;
  ipmi: { hostname: string; username: string; password: string };
  /** Schema versions to record; default {@link SCHEMA_VERSION}. */
  activeSchema?: number;
  latestSchema?: number;
}

/**
 * A new node, as the original's `setup_node` creates it: root and `daemonmode` = mode,
 * `keepalive` = now, `daemonstate` = `init`, `domainstate` = `flushed`, `routerstate` =
 * `secondary` (coordinator) or `client`, zeros for every resource (`cpuload` "0.0"),
 * `runningdomains`/`domainscount`/`networkscount` "0".
 *
 * The original writes only those keys and leaves the rest of the v15 node keys to the next
 * schema apply (empty). We create them all at once: schema versions (the original's own write of
 * `activeschema` for a new node fails silently because the node does not exist yet — **[bug?]**),
 * the SR-IOV and monitoring parents empty, `monitoring_health` "None" (no health data) and
 * `network_stats` "{}" (valid JSON, the value the original writes at shutdown).
 */
export function newNodeObject(input: NewNodeInput): ObjectDefinition {
  const k = NODE_KEYS;
  const entries: ObjectEntry[] = [
    ['', input.daemonMode],
    [k.daemonMode, input.daemonMode],
    [k.keepalive, int.encode(Math.floor(input.nowMs / 1000))],
    [k.activeSchema, int.encode(input.activeSchema ?? SCHEMA_VERSION)],
    [k.latestSchema, int.encode(input.latestSchema ?? SCHEMA_VERSION)],
    [k.staticData, input.staticData],
    [k.pvcVersion, input.pvcVersion],
    [k.daemonState, 'init'],
    [k.routerState, input.daemonMode === 'coordinator' ? 'secondary' : 'client'],
    [k.domainState, 'flushed'],
    [k.ipmiHostname, input.ipmi.hostname],
    [k.ipmiUsername, input.ipmi.username],
    [k.ipmiPassword, input.ipmi.password],
    [k.memTotal, '0'],
    [k.memUsed, '0'],
    [k.memFree, '0'],
    [k.memAlloc, '0'],
    [k.memProv, '0'],
    [k.vcpuAlloc, '0'],
    [k.cpuLoad, float.encode(0)],
    [k.runningDomains, '0'],
    [k.domainsCount, '0'],
    [k.networksCount, '0'],
    [k.sriov, ''],
    [k.sriovPf, ''],
    [k.sriovVf, ''],
    [k.monitoringPlugins, ''],
    [k.monitoringData, ''],
    [k.monitoringHealth, 'None'],
    [k.networkStats, '{}'],
  ];
  return { root: paths.node(input.name).root, entries };
}

/** A tag of a VM. */
export interface DomainTag {
  name: string;
  type: string;
  protected: boolean;
}

/** Inputs of a VM definition (API `define_vm`); optional fields take the original's defaults. */
export interface NewDomainInput {
  uuid: string;
  name: string;
  xml: string;
  node: string;
  /** Default `stop` (provisioner `provision`, restore `restore`, import `import`, mirror `mirror`). */
  state?: string;
  /** Provisioner profile; default none (`"None"`). */
  profile?: string | null;
  /** `pool/volume` names of the RBD disks. */
  rbdList?: readonly string[];
  autostart?: boolean;
  /** Lower-cased; default `none`. */
  migrationMethod?: string;
  migrationMaxDowntimeMs?: number;
  nodeLimit?: readonly string[];
  /** Lower-cased; default `none` (= the cluster's selector). */
  nodeSelector?: string;
  tags?: readonly DomainTag[];
}

/**
 * A new VM with every v15 domain key, like the original's `define_vm`. The original writes the
 * tags in separate transactions after the VM; here they are part of the one creation.
 */
export function newDomainObject(input: NewDomainInput): ObjectDefinition {
  const k = DOMAIN_KEYS;
  const entries: ObjectEntry[] = [
    ['', input.name],
    [k.xml, input.xml],
    [k.state, input.state ?? 'stop'],
    [k.profile, nullable(text).encode(input.profile ?? null)],
    [k.stats, ''],
    [k.node, input.node],
    [k.lastNode, ''],
    [k.failedReason, ''],
    [k.rbdList, commaList.encode([...(input.rbdList ?? [])])],
    [k.consoleLog, ''],
    [k.vnc, ''],
    [k.nodeAutostart, bool.encode(input.autostart ?? false)],
    [k.migrationMethod, pyStr(input.migrationMethod ?? null).toLowerCase()],
    [k.migrationMaxDowntime, int.encode(input.migrationMaxDowntimeMs ?? 300)],
    [k.nodeLimit, commaList.encode([...(input.nodeLimit ?? [])])],
    [k.nodeSelector, pyStr(input.nodeSelector ?? null).toLowerCase()],
    [k.tags, ''],
    [k.migrateSyncLock, ''],
    [k.snapshots, ''],
  ];
  for (const tag of input.tags ?? []) {
    const t = `${k.tags}/${segment('tag', tag.name)}`;
    entries.push([t, tag.name], [`${t}/type`, tag.type], [`${t}/protected`, bool.encode(tag.protected)]);
  }
  return { root: paths.domain(input.uuid).root, entries };
}

/** Inputs of a network definition (API `add_network`). Absent addresses are written `"None"`. */
export interface NewNetworkInput {
  vni: string | number;
  description: string;
  type: 'managed' | 'bridged';
  /** Empty = let the node daemon fill in the maximum. */
  mtu?: number | '';
  /** Default `<description>.local` for managed networks. */
  domain?: string;
  nameServers?: readonly string[];
  ip4Network?: string | null;
  ip4Gateway?: string | null;
  ip6Network?: string | null;
  /** Default `<ip6 prefix>1` when an IPv6 network is given. */
  ip6Gateway?: string | null;
  dhcp4?: boolean;
  dhcp4Start?: string | null;
  dhcp4End?: string | null;
}

/**
 * A new network with every v15 network key. `dhcp6_flag` is `True` whenever an IPv6 network is
 * set. (One version of the original writes that flag to the `dhcp4_flag` key by mistake, where
 * the real DHCPv4 flag then overwrites it; we write the key it plainly intends — **[bug?]**.)
 */
export function newNetworkObject(input: NewNetworkInput): ObjectDefinition {
  const k = NETWORK_KEYS;
  const none = nullable(text);
  const ip6 = input.ip6Network ?? null;
  const ip6Gateway = input.ip6Gateway ?? (ip6 === null ? null : `${ip6.split('/')[0] ?? ''}1`);
  const domain = input.domain ?? (input.type === 'managed' ? `${input.description}.local` : '');
  const entries: ObjectEntry[] = [
    ['', input.description],
    [k.type, input.type],
    [k.mtu, input.mtu === undefined || input.mtu === '' ? '' : int.encode(input.mtu)],
    [k.domain, domain],
    [k.nameServers, commaList.encode([...(input.nameServers ?? [])])],
    [k.ip4Network, none.encode(input.ip4Network ?? null)],
    [k.ip4Gateway, none.encode(input.ip4Gateway ?? null)],
    [k.ip6Network, none.encode(ip6)],
    [k.ip6Gateway, none.encode(ip6Gateway)],
    [k.dhcp4Flag, bool.encode(input.dhcp4 ?? false)],
    [k.dhcp6Flag, bool.encode(ip6 !== null)],
    [k.dhcp4Start, none.encode(input.dhcp4Start ?? null)],
    [k.dhcp4End, none.encode(input.dhcp4End ?? null)],
    [k.reservations, ''],
    [k.leases, ''],
    [k.firewallRules, ''],
    [k.firewallIn, ''],
    [k.firewallOut, ''],
  ];
  return { root: paths.network(input.vni).root, entries };
}
