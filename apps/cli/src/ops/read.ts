import {
  domainKeys, domainXmlFacts, nodeKeys, pluginKeys, readKeyIfExists, readKeys, readNodeRecord, tagKeys, type ZkClient,
} from '@pvc/zk';
import { listNodes, listVmRefs, type VmRef } from '../lookup.js';
import { Problems } from '../problems.js';

/**
 * Reading nodes and VMs for display, every key through the key table of `@pvc/zk`. Bad data in ZK
 * never fails a read command: a value its key's codec rejects reads as the key's fallback (the
 * original's default) and the problem (key, value, what was expected) is listed in `problems`.
 */

/** One health plugin's last result. */
export interface PluginResult {
  name: string;
  delta: number;
  message: string;
  /** Epoch seconds of its last run; 0 = never. */
  lastRun: number;
}

/** A node as `node list/info` and `cluster status` show it. */
export interface NodeSummary {
  name: string;
  mode: string;
  daemonState: string;
  routerState: string;
  domainState: string;
  /** 0–100, or null when no health data (`None`). */
  health: number | null;
  pvcVersion: string;
  /** Epoch seconds of the last keepalive, or null when there was none. */
  keepalive: number | null;
  /** From `staticdata`; null when it is absent or unreadable. */
  cpus: number | null;
  kernel: string;
  os: string;
  arch: string;
  load: number;
  vcpuAlloc: number;
  memory: { totalMiB: number; usedMiB: number; freeMiB: number; allocMiB: number; provMiB: number };
  runningDomains: string[];
  domainsCount: number;
  ipmiHostname: string;
  plugins: PluginResult[];
  problems: string[];
}

/**
 * Reads one node through the shared node record (states, figures, running VMs, health; the IPMI
 * password is read there but never kept here) plus the keys only display needs. Undefined when
 * the node does not exist (any more).
 */
export async function readNodeSummary(zk: ZkClient, name: string, withPlugins = true): Promise<NodeSummary | undefined> {
  const p = new Problems();
  const k = nodeKeys(name);
  const [record, [pvcVersion, keepalive, staticData, pluginNames]] = await Promise.all([
    readNodeRecord(zk, name, p.logger),
    readKeys(zk, [k.pvcVersion, k.keepalive, k.staticData, k.monitoringPlugins], p.opts),
  ]);
  if (!record) return undefined;
  const f = record.figures;
  return {
    name, mode: record.daemonMode ?? '', daemonState: record.daemonState ?? '', routerState: record.routerState ?? '',
    domainState: record.domainState ?? '', health: record.health, pvcVersion, keepalive: keepalive > 0 ? keepalive : null,
    cpus: staticData?.cpuCount ?? null, kernel: staticData?.kernel ?? '', os: staticData?.os ?? '', arch: staticData?.arch ?? '',
    load: f.cpuLoad, vcpuAlloc: f.vcpuAlloc,
    memory: { totalMiB: f.memTotalMiB, usedMiB: f.memUsedMiB, freeMiB: f.memFreeMiB, allocMiB: f.memAllocMiB, provMiB: f.memProvMiB },
    runningDomains: record.runningDomains, domainsCount: f.domainsCount, ipmiHostname: record.ipmi.host,
    plugins: withPlugins ? await readPlugins(zk, name, pluginNames, p) : [],
    problems: p.list,
  };
}

async function readPlugins(zk: ZkClient, node: string, names: readonly string[], p: Problems): Promise<PluginResult[]> {
  return Promise.all(
    names.map(async (name) => {
      const k = pluginKeys(node, name);
      const [delta, message, lastRun] = await readKeys(zk, [k.healthDelta, k.message, k.lastRun], p.opts);
      return { name, delta, message, lastRun };
    }),
  );
}

/** Every node, sorted by name. */
export async function readAllNodes(zk: ZkClient, withPlugins = true): Promise<NodeSummary[]> {
  const nodes = await Promise.all((await listNodes(zk)).map((n) => readNodeSummary(zk, n, withPlugins)));
  return nodes.filter((n): n is NodeSummary => n !== undefined);
}

/** A VM tag. */
export interface TagSummary {
  name: string;
  type: string;
  protected: boolean;
}

/** A VM as `vm list/info` and `cluster status` show it. */
export interface VmSummary extends VmRef {
  /** `''` when absent or not a VM state (see problems). */
  state: string;
  node: string;
  lastNode: string;
  failedReason: string;
  autostart: boolean;
  migrationMethod: string;
  migrationMaxDowntimeMs: number;
  nodeSelector: string;
  nodeLimit: string[];
  profile: string;
  vnc: string;
  rbdList: string[];
  tags: TagSummary[];
  /** From the stored XML (`domainXmlFacts`); null when it cannot be read (see problems). */
  vcpus: number | null;
  memoryMiB: number | null;
  macs: string[];
  problems: string[];
}

const MAC_ATTR = /<mac\s[^>]*?address\s*=\s*(['"])([^'"]*)\1/g;

/** The interface MACs of a stored XML, lower-cased (a tolerant reading, like `domainXmlFacts`). */
export function storedMacs(xml: string): string[] {
  return [...xml.matchAll(MAC_ATTR)].map((m) => (m[2] ?? '').toLowerCase());
}

/** Reads one VM. */
export async function readVmSummary(zk: ZkClient, ref: VmRef): Promise<VmSummary> {
  const p = new Problems();
  const d = domainKeys(ref.uuid);
  const [state, [node, lastNode, failedReason, autostart, method, downtime, selector, limit, profile, vnc, rbdList, xml], tags] = await Promise.all([
    readKeyIfExists(zk, d.state, p.opts),
    readKeys(zk, [d.node, d.lastNode, d.failedReason, d.nodeAutostart, d.migrationMethod, d.migrationMaxDowntime, d.nodeSelector,
      d.nodeLimit, d.profile, d.vnc, d.rbdList, d.xml], p.opts),
    readTags(zk, ref.uuid, p),
  ]);
  if (state === undefined && (await zk.exists(d.state.path)) === undefined) p.add(`${d.state.path} is missing`);
  const size = domainXmlFacts(xml);
  if (size.memoryMiB === undefined) p.add(`cannot read the VM's size: no readable <memory> in ${d.xml.path}`);
  const readable = size.memoryMiB !== undefined;
  return {
    ...ref, state: state ?? '', node, lastNode, failedReason, autostart, migrationMethod: method, migrationMaxDowntimeMs: downtime,
    nodeSelector: selector, nodeLimit: limit, profile: profile ?? '', vnc, rbdList, tags,
    vcpus: readable ? (size.vcpus ?? 1) : null, memoryMiB: size.memoryMiB ?? null, macs: storedMacs(xml), problems: p.list,
  };
}

async function readTags(zk: ZkClient, uuid: string, p: Problems): Promise<TagSummary[]> {
  const names = (await zk.children(domainKeys(uuid).tags.path).catch(() => [] as string[])).sort();
  return Promise.all(
    names.map(async (tag) => {
      const t = tagKeys(uuid, tag);
      const [name, type, prot] = await readKeys(zk, [t.root, t.type, t.protected], p.opts);
      return { name: name || tag, type: type || 'user', protected: prot };
    }),
  );
}

/** Every VM, sorted by name. */
export async function readAllVms(zk: ZkClient): Promise<VmSummary[]> {
  return Promise.all((await listVmRefs(zk)).map((r) => readVmSummary(zk, r)));
}
