import { codec, DOMAIN_TAG_KEYS, paths, type ZkClient } from '@pvc/zk';
import { listNodes, listVmRefs, type VmRef } from '../lookup.js';
import { parseDomainXml } from './domain-xml.js';

/**
 * Reading nodes and VMs for display. Bad data in ZK never fails a read command: a value that does
 * not decode is shown as it is (or as null) and the problem is listed in `problems`.
 */

/** One health plugin's last result. */
export interface PluginResult {
  name: string;
  delta: number | null;
  message: string;
  lastRun: number | null;
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
  /** Epoch seconds of the last keepalive, or null. */
  keepalive: number | null;
  cpus: number | null;
  kernel: string;
  os: string;
  arch: string;
  load: number | null;
  vcpuAlloc: number | null;
  memory: { totalMiB: number | null; usedMiB: number | null; freeMiB: number | null; allocMiB: number | null; provMiB: number | null };
  runningDomains: string[];
  domainsCount: number | null;
  ipmiHostname: string;
  plugins: PluginResult[];
  problems: string[];
}

function num(raw: string | undefined, key: string, problems: string[]): number | null {
  if (raw === undefined || raw === '' || raw === 'None') return null;
  const r = codec.safeDecode(codec.float, raw, key);
  if (r.ok) return r.value;
  problems.push(r.error.message);
  return null;
}

/** Reads one node (it must exist; absent keys read as empty). */
export async function readNodeSummary(zk: ZkClient, name: string, withPlugins = true): Promise<NodeSummary> {
  const k = paths.node(name);
  const keys = [k.daemonMode, k.daemonState, k.routerState, k.domainState, k.monitoringHealth, k.pvcVersion, k.keepalive,
    k.staticData, k.cpuLoad, k.vcpuAlloc, k.memTotal, k.memUsed, k.memFree, k.memAlloc, k.memProv, k.runningDomains,
    k.domainsCount, k.ipmiHostname, k.monitoringPlugins] as const;
  const v = await Promise.all(keys.map((p) => zk.read(p)));
  const at = (i: number): string | undefined => v[i];
  const problems: string[] = [];
  const n = (i: number): number | null => num(at(i), keys[i] ?? '', problems);
  const stat = (at(7) ?? '').split(/\s+/);
  const cpus = Number(stat[0]);
  const pluginNames = codec.spaceList.decode(at(18) ?? '', k.monitoringPlugins);
  return {
    name, mode: at(0) ?? '', daemonState: at(1) ?? '', routerState: at(2) ?? '', domainState: at(3) ?? '',
    health: n(4), pvcVersion: at(5) ?? '', keepalive: n(6),
    cpus: Number.isInteger(cpus) && cpus > 0 ? cpus : null, kernel: stat[1] ?? '', os: stat[2] ?? '', arch: stat[3] ?? '',
    load: n(8), vcpuAlloc: n(9),
    memory: { totalMiB: n(10), usedMiB: n(11), freeMiB: n(12), allocMiB: n(13), provMiB: n(14) },
    runningDomains: codec.runningDomains.decode(at(15) ?? '', k.runningDomains),
    domainsCount: n(16), ipmiHostname: at(17) ?? '',
    plugins: withPlugins ? await readPlugins(zk, name, pluginNames, problems) : [],
    problems,
  };
}

async function readPlugins(zk: ZkClient, node: string, names: string[], problems: string[]): Promise<PluginResult[]> {
  return Promise.all(
    names.map(async (name) => {
      const p = paths.node(node).monitoringPlugin(name);
      const [delta, message, lastRun] = await Promise.all([zk.read(p.healthDelta), zk.read(p.message), zk.read(p.lastRun)]);
      return { name, delta: num(delta, p.healthDelta, problems), message: message ?? '', lastRun: num(lastRun, p.lastRun, problems) };
    }),
  );
}

/** Every node, sorted by name. */
export async function readAllNodes(zk: ZkClient, withPlugins = true): Promise<NodeSummary[]> {
  return Promise.all((await listNodes(zk)).map((n) => readNodeSummary(zk, n, withPlugins)));
}

/** A VM tag. */
export interface TagSummary {
  name: string;
  type: string;
  protected: boolean;
}

/** A VM as `vm list/info` and `cluster status` show it. */
export interface VmSummary extends VmRef {
  state: string;
  node: string;
  lastNode: string;
  failedReason: string;
  autostart: boolean;
  migrationMethod: string;
  migrationMaxDowntimeMs: number | null;
  nodeSelector: string;
  nodeLimit: string[];
  profile: string;
  vnc: string;
  rbdList: string[];
  tags: TagSummary[];
  /** From the XML; null when the stored XML does not parse (see problems). */
  vcpus: number | null;
  memoryMiB: number | null;
  macs: string[];
  problems: string[];
}

/** Reads one VM. */
export async function readVmSummary(zk: ZkClient, ref: VmRef): Promise<VmSummary> {
  const d = paths.domain(ref.uuid);
  const keys = [d.state, d.node, d.lastNode, d.failedReason, d.nodeAutostart, d.migrationMethod, d.migrationMaxDowntime,
    d.nodeSelector, d.nodeLimit, d.profile, d.vnc, d.rbdList, d.xml] as const;
  const v = await Promise.all(keys.map((p) => zk.read(p)));
  const problems: string[] = [];
  const xml = v[12] ?? '';
  let parsed: ReturnType<typeof parseDomainXml> | undefined;
  try {
    parsed = parseDomainXml(xml, `${d.xml}`);
  } catch (err) {
    problems.push(err instanceof Error ? err.message : String(err));
  }
  return {
    ...ref, state: v[0] ?? '', node: v[1] ?? '', lastNode: v[2] ?? '', failedReason: v[3] ?? '',
    autostart: (v[4] ?? '') === 'True', migrationMethod: v[5] ?? '', migrationMaxDowntimeMs: num(v[6], d.migrationMaxDowntime, problems),
    nodeSelector: v[7] ?? '', nodeLimit: codec.commaList.decode(v[8] ?? '', d.nodeLimit), profile: v[9] ?? '', vnc: v[10] ?? '',
    rbdList: codec.commaList.decode(v[11] ?? '', d.rbdList), tags: await readTags(zk, ref.uuid),
    vcpus: parsed?.vcpus ?? null, memoryMiB: parsed?.memoryMiB ?? null, macs: [...(parsed?.macs ?? [])], problems,
  };
}

async function readTags(zk: ZkClient, uuid: string): Promise<TagSummary[]> {
  const names = (await zk.children(paths.domain(uuid).tags).catch(() => [] as string[])).sort();
  return Promise.all(
    names.map(async (tag) => {
      const t = paths.domain(uuid).tag(tag);
      const [name, type, prot] = await Promise.all([zk.read(t.root), zk.read(`${t.root}/${DOMAIN_TAG_KEYS.type}`), zk.read(t.protected)]);
      return { name: name || tag, type: type ?? 'user', protected: prot === 'True' };
    }),
  );
}

/** Every VM, sorted by name. */
export async function readAllVms(zk: ZkClient): Promise<VmSummary[]> {
  return Promise.all((await listVmRefs(zk)).map((r) => readVmSummary(zk, r)));
}
