import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { ClusterError } from './errors.js';
import { planCeph, type CephPlan } from './ceph-plan.js';
import type { ClusterOptions, HostDirs, NetworkName } from './types.js';

/** Every network, in address order. */
export const NETWORKS: readonly NetworkName[] = ['cluster', 'storage', 'upstream', 'ipmi'];
/** Networks cut by cutNetwork() when none are named: the BMC network stays up, like a real one. */
export const HOST_NETWORKS: readonly NetworkName[] = ['cluster', 'storage', 'upstream'];
/** Host-side address of the root namespace on every bridge. */
export const ROOT_HOST_OCTET = 254;
export const ZK_CLIENT_PORT = 2181;
export const LIBVIRT_TCP_PORT = 16509;
export const IPMI_PORT = 623;

/** One network: its bridge in the root namespace and its /24. */
export interface NetworkPlan {
  name: NetworkName;
  bridge: string;
  /** First three octets, e.g. "10.200.4". */
  prefix: string;
  rootIp: string;
}

/** Everything about one host that follows from the options (no I/O). */
export interface HostPlan {
  index: number;
  name: string;
  netns: string;
  coordinator: boolean;
  ips: Record<NetworkName, string>;
  /** Root-namespace end of each veth (the end inside the host is named after the network). */
  veths: Record<NetworkName, string>;
  dirs: HostDirs;
  /** libvirtd host_uuid: must differ per host or libvirt refuses to migrate "to the same host". */
  uuid: string;
}

/** The frozen, validated form of {@link ClusterOptions}. */
export interface ClusterPlan {
  name: string;
  workDir: string;
  cacheDir: string;
  subnet: number;
  networks: Record<NetworkName, NetworkPlan>;
  hosts: HostPlan[];
  ipmi: { user: string; pass: string };
  keepOnExit: boolean;
  /** Hosts get bare cluster/storage/upstream links (see ClusterOptions.bareLinks). */
  bareLinks: boolean;
  readyTimeoutMs: number;
  /** The cluster's Ceph (ClusterOptions.ceph), or undefined without one. */
  ceph: CephPlan | undefined;
  /** The options as given, minus functions: what the state file records to reopen the cluster. */
  options: Omit<ClusterOptions, 'log'>;
}

const NAME_RE = /^[a-z][a-z0-9]{0,5}$/;
const SAFE_PATH_RE = /^\/[A-Za-z0-9._\-/]+$/;

function fail(key: string, message: string): never {
  throw new ClusterError('CLUSTER_OPTIONS', `invalid cluster option "${key}": ${message}`);
}

function intIn(key: string, v: number, lo: number, hi: number): number {
  if (!Number.isInteger(v) || v < lo || v > hi) fail(key, `${String(v)} is not an integer in ${lo}..${hi}`);
  return v;
}

function safePath(key: string, p: string): string {
  if (!SAFE_PATH_RE.test(p)) fail(key, `"${p}" must be absolute and contain only [A-Za-z0-9._-/]`);
  return p.replace(/\/+$/, '');
}

/** A stable UUID derived from text (libvirt host_uuid, IPMI GUID). */
export function stableUuid(text: string): string {
  const h = createHash('sha256').update(text).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** Subnet slot from the cluster name, so differently named clusters rarely share addresses. */
export function defaultSubnet(name: string): number {
  return createHash('sha256').update(name).digest()[0]! % 64;
}

function hostDirs(workDir: string, host: string): HostDirs {
  const root = join(workDir, 'hosts', host);
  return {
    root,
    log: join(root, 'log'),
    runLibvirt: join(root, 'fs', 'run-libvirt'),
    varLibLibvirt: join(root, 'fs', 'var-lib-libvirt'),
    varLogLibvirt: join(root, 'fs', 'var-log-libvirt'),
    varCacheLibvirt: join(root, 'fs', 'var-cache-libvirt'),
    etcLibvirt: join(root, 'fs', 'etc-libvirt'),
    zk: join(root, 'zk'),
    varLibCeph: join(root, 'fs', 'var-lib-ceph'),
    varLogCeph: join(root, 'fs', 'var-log-ceph'),
    runCeph: join(root, 'fs', 'run-ceph'),
  };
}

function networkPlans(name: string, subnet: number): Record<NetworkName, NetworkPlan> {
  const out = {} as Record<NetworkName, NetworkPlan>;
  NETWORKS.forEach((net, i) => {
    const prefix = `10.200.${subnet * 4 + i}`;
    out[net] = { name: net, bridge: `${name}-${net}`, prefix, rootIp: `${prefix}.${ROOT_HOST_OCTET}` };
  });
  return out;
}

function hostPlan(name: string, workDir: string, nets: Record<NetworkName, NetworkPlan>, i: number, coordinators: number): HostPlan {
  const host = `hv${i}`;
  const ips = {} as Record<NetworkName, string>;
  const veths = {} as Record<NetworkName, string>;
  for (const net of NETWORKS) {
    ips[net] = `${nets[net].prefix}.${i}`;
    veths[net] = `${name}-${i}-${net[0]!}`;
  }
  return {
    index: i,
    name: host,
    netns: `${name}-${host}`,
    coordinator: i <= coordinators,
    ips,
    veths,
    dirs: hostDirs(workDir, host),
    uuid: stableUuid(`pvc-cluster/${name}/${host}`),
  };
}

/** Validates and defaults the options into a frozen plan; throws ClusterError naming the bad key. */
export function planCluster(opts: ClusterOptions = {}): ClusterPlan {
  const name = opts.name ?? 'pvct';
  if (!NAME_RE.test(name)) fail('name', `"${name}" must match ${NAME_RE.source} (interface names are ≤ 15 chars)`);
  const hosts = intIn('hosts', opts.hosts ?? 3, 1, 9);
  const coordinators = intIn('coordinators', opts.coordinators ?? Math.min(3, hosts), 1, hosts);
  if (coordinators % 2 === 0) fail('coordinators', `${coordinators} is even; a Zookeeper ensemble needs an odd size`);
  const subnet = intIn('subnet', opts.subnet ?? defaultSubnet(name), 0, 63);
  const workDir = safePath('workDir', opts.workDir ?? `/tmp/pvc-cluster/${name}`);
  const cacheDir = safePath('cacheDir', opts.cacheDir ?? '/var/tmp/pvc-cluster-cache');
  const ipmi = opts.ipmi ?? { user: 'admin', pass: 'pvc-ipmi' };
  if (!/^[A-Za-z0-9._-]{1,16}$/.test(ipmi.user)) fail('ipmi.user', 'must be 1–16 chars of [A-Za-z0-9._-]');
  if (!/^[A-Za-z0-9._-]{1,20}$/.test(ipmi.pass)) fail('ipmi.pass', 'must be 1–20 chars of [A-Za-z0-9._-]');
  const networks = networkPlans(name, subnet);
  const hostPlans = Array.from({ length: hosts }, (_, k) => hostPlan(name, workDir, networks, k + 1, coordinators));
  const { log: _log, ...options } = opts;
  if (opts.ceph !== undefined && typeof opts.ceph !== 'boolean') fail('ceph', `expected true or false, got ${JSON.stringify(opts.ceph)}`);
  return Object.freeze({
    name,
    workDir,
    cacheDir,
    subnet,
    networks,
    hosts: hostPlans,
    ipmi,
    keepOnExit: opts.keepOnExit ?? false,
    bareLinks: opts.bareLinks ?? false,
    readyTimeoutMs: intIn('readyTimeoutMs', opts.readyTimeoutMs ?? 90_000, 1_000, 3_600_000),
    ceph: opts.ceph === true ? planCeph(name, workDir, networks.storage, hostPlans) : undefined,
    options: { ...options, name },
  });
}
