import { ZkPathError } from './errors.js';

/**
 * The ZK key layout of the original's schema version 15 (`daemon-common/migrations/versions/15.json`),
 * as one table of typed path builders. No other module spells a PVC path literally.
 */
export const SCHEMA_VERSION = 15;

/** Validates one path segment (node name, UUID, VNI, MAC, rule description…). */
export function segment(what: string, value: string | number): string {
  const v = String(value);
  if (v === '' || v.includes('/') || v === '.' || v === '..' || v.includes('\0')) throw new ZkPathError(what, v);
  return v;
}

type Keys = Readonly<Record<string, string>>;
/** An object's root path plus one absolute path per key. */
export type PathsOf<K extends Keys> = { readonly root: string } & { readonly [P in keyof K]: string };

function under<K extends Keys>(root: string, keys: K): PathsOf<K> {
  const out: Record<string, string> = { root };
  for (const [name, rel] of Object.entries(keys)) out[name] = `${root}/${rel}`;
  return out as PathsOf<K>;
}

/** Keys of `/nodes/<name>`, relative to the node root (schema names in comments where they differ). */
export const NODE_KEYS = {
  keepalive: 'keepalive',
  daemonMode: 'daemonmode',
  activeSchema: 'activeschema',
  latestSchema: 'latestschema',
  staticData: 'staticdata',
  pvcVersion: 'pvcversion',
  runningDomains: 'runningdomains',
  domainsCount: 'domainscount', // count.provisioned_domains: running libvirt domains
  networksCount: 'networkscount',
  daemonState: 'daemonstate',
  routerState: 'routerstate',
  domainState: 'domainstate',
  cpuLoad: 'cpuload',
  vcpuAlloc: 'vcpualloc',
  memTotal: 'memtotal',
  memUsed: 'memused',
  memFree: 'memfree',
  memAlloc: 'memalloc',
  memProv: 'memprov',
  ipmiHostname: 'ipmihostname',
  ipmiUsername: 'ipmiusername',
  ipmiPassword: 'ipmipassword',
  sriov: 'sriov',
  sriovPf: 'sriov/pf',
  sriovVf: 'sriov/vf',
  monitoringPlugins: 'monitoring_plugins',
  monitoringData: 'monitoring_data',
  monitoringHealth: 'monitoring_health',
  networkStats: 'network_stats',
} as const;

/**
 * Keys of `/nodes/<name>` that are ours, not the original's schema v15 (which ignores unknown
 * keys): never created by the schema fill or a new node object, absent = unknown.
 * `networks_up`: the VNIs whose `vmbr<N>` is up on the node, written by netd.
 */
export const NODE_OWN_KEYS = {
  networksUp: 'networks_up',
} as const;

/** Keys of `/nodes/<n>/monitoring_data/<plugin>`. */
export const MONITORING_PLUGIN_KEYS = {
  lastRun: 'last_run',
  healthDelta: 'health_delta',
  message: 'message',
  data: 'data',
  runtime: 'runtime',
} as const;

/** Keys of `/nodes/<n>/sriov/pf/<pf>`. */
export const SRIOV_PF_KEYS = { mtu: 'mtu', vfCount: 'vfcount' } as const;

/** Keys of `/nodes/<n>/sriov/vf/<vf>`. */
export const SRIOV_VF_KEYS = {
  pf: 'pf',
  mtu: 'mtu',
  mac: 'mac',
  phyMac: 'phy_mac',
  config: 'config',
  vlanId: 'config/vlan_id',
  vlanQos: 'config/vlan_qos',
  txRateMin: 'config/tx_rate_min',
  txRateMax: 'config/tx_rate_max',
  spoofCheck: 'config/spoof_check',
  linkState: 'config/link_state',
  trust: 'config/trust',
  queryRss: 'config/query_rss',
  pci: 'pci',
  pciDomain: 'pci/domain',
  pciBus: 'pci/bus',
  pciSlot: 'pci/slot',
  pciFunction: 'pci/function',
  used: 'used',
  usedBy: 'used_by',
} as const;

/** Keys of `/domains/<uuid>`. */
export const DOMAIN_KEYS = {
  xml: 'xml',
  state: 'state',
  profile: 'profile',
  stats: 'stats',
  node: 'node',
  lastNode: 'lastnode',
  failedReason: 'failedreason',
  rbdList: 'rbdlist',
  consoleLog: 'consolelog',
  vnc: 'vnc',
  nodeAutostart: 'node_autostart',
  migrationMethod: 'migration_method',
  migrationMaxDowntime: 'migration_max_downtime',
  nodeSelector: 'node_selector',
  nodeLimit: 'node_limit',
  tags: 'tags',
  migrateSyncLock: 'migrate_sync_lock',
  snapshots: 'snapshots',
} as const;

export const DOMAIN_TAG_KEYS = { type: 'type', protected: 'protected' } as const;
export const DOMAIN_SNAPSHOT_KEYS = { timestamp: 'timestamp', xml: 'xml', rbdSnapList: 'rbdsnaplist' } as const;

/** Keys of `/networks/<vni>`. */
export const NETWORK_KEYS = {
  type: 'nettype',
  mtu: 'mtu',
  domain: 'domain',
  nameServers: 'name_servers',
  ip4Network: 'ip4_network',
  ip4Gateway: 'ip4_gateway',
  ip6Network: 'ip6_network',
  ip6Gateway: 'ip6_gateway',
  dhcp4Flag: 'dhcp4_flag',
  dhcp6Flag: 'dhcp6_flag',
  dhcp4Start: 'dhcp4_start',
  dhcp4End: 'dhcp4_end',
  reservations: 'dhcp4_reservations',
  leases: 'dhcp4_leases',
  firewallRules: 'firewall_rules',
  firewallIn: 'firewall_rules/in',
  firewallOut: 'firewall_rules/out',
} as const;

export const RESERVATION_KEYS = { ipaddr: 'ipaddr', hostname: 'hostname' } as const;
export const LEASE_KEYS = { expiry: 'expiry', ipaddr: 'ipaddr', hostname: 'hostname', clientId: 'clientid' } as const;
export const FIREWALL_RULE_KEYS = { rule: 'rule', order: 'order' } as const;

/** Keys of `/ceph/osds/<id>`. */
export const OSD_KEYS = {
  node: 'node',
  device: 'device',
  dbDevice: 'db_device',
  fsid: 'fsid',
  fsidOsd: 'fsid/osd',
  fsidCluster: 'fsid/cluster',
  lvm: 'lvm',
  lvmVg: 'lvm/vg',
  lvmLv: 'lvm/lv',
  isSplit: 'is_split',
  stats: 'stats',
} as const;

export const POOL_KEYS = { pgs: 'pgs', tier: 'tier', stats: 'stats' } as const;
export const STATS_KEYS = { stats: 'stats' } as const;

export const FAULT_KEYS = {
  firstTime: 'first_time',
  lastTime: 'last_time',
  ackTime: 'ack_time',
  status: 'status',
  delta: 'delta',
  message: 'message',
} as const;

const NODES = '/nodes';
const DOMAINS = '/domains';
const NETWORKS = '/networks';
const CEPH = '/ceph';

/** Every v15 path, as builders. Arguments are validated as single path segments. */
export const paths = {
  schema: { root: '/schema', version: '/schema/version' },
  config: {
    root: '/config',
    maintenance: '/config/maintenance',
    fenceLock: '/config/fence_lock',
    primaryNode: '/config/primary_node',
    primaryNodeSyncLock: '/config/primary_node/sync_lock',
    upstreamIp: '/config/upstream_ip',
    migrationTargetSelector: '/config/migration_target_selector',
  },
  logs: {
    root: '/logs',
    node: (node: string) => under(`/logs/${segment('node name', node)}`, { messages: 'messages' }),
  },
  faults: {
    root: '/faults',
    fault: (id: string) => under(`/faults/${segment('fault id', id)}`, FAULT_KEYS),
  },
  nodes: NODES,
  node: (name: string) => {
    const root = `${NODES}/${segment('node name', name)}`;
    return {
      ...under(root, { ...NODE_KEYS, ...NODE_OWN_KEYS }),
      sriovPfDevice: (pf: string) => under(`${root}/sriov/pf/${segment('SR-IOV PF', pf)}`, SRIOV_PF_KEYS),
      sriovVfDevice: (vf: string) => under(`${root}/sriov/vf/${segment('SR-IOV VF', vf)}`, SRIOV_VF_KEYS),
      monitoringPlugin: (p: string) =>
        under(`${root}/monitoring_data/${segment('plugin name', p)}`, MONITORING_PLUGIN_KEYS),
    };
  },
  domains: DOMAINS,
  domain: (uuid: string) => {
    const root = `${DOMAINS}/${segment('VM UUID', uuid)}`;
    return {
      ...under(root, DOMAIN_KEYS),
      tag: (tag: string) => under(`${root}/tags/${segment('tag', tag)}`, DOMAIN_TAG_KEYS),
      snapshot: (name: string) => under(`${root}/snapshots/${segment('snapshot name', name)}`, DOMAIN_SNAPSHOT_KEYS),
    };
  },
  networks: NETWORKS,
  network: (vni: string | number) => {
    const root = `${NETWORKS}/${segment('VNI', vni)}`;
    return {
      ...under(root, NETWORK_KEYS),
      reservation: (mac: string) => under(`${root}/dhcp4_reservations/${segment('MAC', mac)}`, RESERVATION_KEYS),
      lease: (mac: string) => under(`${root}/dhcp4_leases/${segment('MAC', mac)}`, LEASE_KEYS),
      firewallRule: (dir: 'in' | 'out', description: string) =>
        under(`${root}/firewall_rules/${dir}/${segment('rule description', description)}`, FIREWALL_RULE_KEYS),
    };
  },
  ceph: {
    root: CEPH,
    health: `${CEPH}/health`,
    util: `${CEPH}/util`,
    /**
     * Ours, not in schema v15: how current the storage stats are (written by cephd on the primary
     * with every stats pass; see `cephKeys.statsState`). Absent = unknown (an original cluster).
     */
    statsState: `${CEPH}/stats_state`,
    osds: `${CEPH}/osds`,
    pools: `${CEPH}/pools`,
    volumes: `${CEPH}/volumes`,
    snapshots: `${CEPH}/snapshots`,
    osd: (id: string | number) => under(`${CEPH}/osds/${segment('OSD id', id)}`, OSD_KEYS),
    pool: (name: string) => under(`${CEPH}/pools/${segment('pool', name)}`, POOL_KEYS),
    volumePool: (pool: string) => `${CEPH}/volumes/${segment('pool', pool)}`,
    volume: (pool: string, vol: string) =>
      under(`${CEPH}/volumes/${segment('pool', pool)}/${segment('volume', vol)}`, STATS_KEYS),
    snapshotPool: (pool: string) => `${CEPH}/snapshots/${segment('pool', pool)}`,
    snapshotVolume: (pool: string, vol: string) => `${CEPH}/snapshots/${segment('pool', pool)}/${segment('volume', vol)}`,
    snapshot: (pool: string, vol: string, snap: string) =>
      under(`${CEPH}/snapshots/${segment('pool', pool)}/${segment('volume', vol)}/${segment('snapshot', snap)}`, STATS_KEYS),
  },
} as const;

/** The base keys that exist on an initialised cluster (schema `base`), parents first. */
export function baseKeys(): string[] {
  const c = paths.config;
  const s = paths.ceph;
  return [
    paths.schema.root, paths.schema.version, c.root, c.maintenance, c.fenceLock, c.primaryNode,
    c.primaryNodeSyncLock, c.upstreamIp, c.migrationTargetSelector, paths.logs.root, paths.faults.root,
    paths.nodes, paths.domains, paths.networks, s.root, s.health, s.util, s.osds, s.pools, s.volumes, s.snapshots,
  ];
}

/** Lock recipes (kazoo): exclusive `Lock`, shared `ReadLock`, `WriteLock`. */
export type LockKind = 'exclusive' | 'read' | 'write';

/** A lock of the inventory: the data key it lives on and its recipe. */
export interface LockSpec {
  readonly path: string;
  readonly kind: LockKind;
}

/** The lock inventory of the original (§1.6): who locks which key with which recipe. */
export const locks = {
  /** WriteLock held at daemon start while validating/applying the schema. */
  schemaValidate: { path: paths.schema.version, kind: 'write' } as LockSpec,
  /** Lock held by the primary during a hot schema migration. */
  schemaMigrate: { path: paths.schema.version, kind: 'exclusive' } as LockSpec,
  /** ReadLock non-primaries block on until the primary finished migrating. */
  schemaWait: { path: paths.schema.version, kind: 'read' } as LockSpec,
  /** Primary election (0.4 s timeout in the original). */
  primaryElection: { path: paths.config.primaryNode, kind: 'exclusive' } as LockSpec,
  /** Handover lock-step: the taking-over node writes, the relinquishing node reads. */
  primarySyncWrite: { path: paths.config.primaryNodeSyncLock, kind: 'write' } as LockSpec,
  primarySyncRead: { path: paths.config.primaryNodeSyncLock, kind: 'read' } as LockSpec,
  /** One fencer at a time. */
  fence: { path: paths.config.fenceLock, kind: 'exclusive' } as LockSpec,
  /** Held by a fencer while it sets `dead` and fences the node. */
  nodeDaemonState: (node: string): LockSpec => ({ path: paths.node(node).daemonState, kind: 'write' }),
  /** Each logger line appended to the node's ZK log. */
  nodeLog: (node: string): LockSpec => ({ path: paths.logs.node(node).messages, kind: 'write' }),
  /** Serialises state changes of one VM. */
  domainState: (uuid: string): LockSpec => ({ path: paths.domain(uuid).state, kind: 'exclusive' }),
  domainNode: (uuid: string): LockSpec => ({ path: paths.domain(uuid).node, kind: 'exclusive' }),
  /** Migration handshake between sender and receiver. */
  domainMigrateSync: (uuid: string): LockSpec => ({ path: paths.domain(uuid).migrateSyncLock, kind: 'exclusive' }),
} as const;
