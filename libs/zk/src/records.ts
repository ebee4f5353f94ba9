import { libvirtMemoryMiB } from '@pvc/placement';
import type { Logger } from '@pvc/runtime';
import { xmlNetworks } from './domain-bridges.js';
import { decodeKey, readKeys } from './key-read.js';
import { domainKeys, nodeKeys } from './keys.js';
import { paths } from './schema.js';
import type { ZkClient } from './types.js';
import type { DaemonMode, DaemonState, MigrationMethod, NodeDomainState, RouterState, VmSelector, VmState } from './vocab.js';

/**
 * Shared readers of the facts several services need, each key through its codec (`keys.ts`):
 * a node's figures and record, a domain XML's size, and a VM's placement facts.
 *
 * @module
 */

/**
 * The figures of one node that target selection reads, MiB as numbers; the same shape as
 * `@pvc/placement`'s `NodeFacts` (an unknown state is `''`, which placement never picks).
 */
export interface NodeFigures {
  name: string;
  daemonState: string;
  domainState: string;
  memTotalMiB: number;
  memUsedMiB: number;
  memFreeMiB: number;
  memAllocMiB: number;
  memProvMiB: number;
  vcpuAlloc: number;
  cpuLoad: number;
  domainsCount: number;
  /** CPU count from `staticdata`, when it parses. */
  staticCpus?: number;
  /** `networks_up` (ours): the VNIs whose `vmbr<N>` is up there; absent when unknown (key absent or unreadable). */
  networks?: ReadonlySet<number>;
}

/** Reads one node's figures (absent or bad keys read as their fallback: 0, unknown state, unknown networks). */
export async function readNodeFigures(zk: ZkClient, name: string, logger?: Logger): Promise<NodeFigures> {
  const k = nodeKeys(name);
  const [daemonState, domainState, stat, memTotal, memUsed, memFree, memAlloc, memProv, vcpuAlloc, cpuLoad, domainsCount, networksUp] = await readKeys(
    zk, [k.daemonState, k.domainState, k.staticData, k.memTotal, k.memUsed, k.memFree, k.memAlloc, k.memProv, k.vcpuAlloc, k.cpuLoad, k.domainsCount, k.networksUp], opts(logger),
  );
  return {
    name, daemonState: daemonState ?? '', domainState: domainState ?? '',
    memTotalMiB: memTotal, memUsedMiB: memUsed, memFreeMiB: memFree, memAllocMiB: memAlloc, memProvMiB: memProv,
    vcpuAlloc, cpuLoad, domainsCount,
    ...(stat !== undefined ? { staticCpus: stat.cpuCount } : {}),
    ...(networksUp !== undefined ? { networks: new Set(networksUp) } : {}),
  };
}

/** The figures of every node under `/nodes`, sorted by name. */
export async function readAllNodeFigures(zk: ZkClient, logger?: Logger): Promise<NodeFigures[]> {
  const names = (await zk.children(paths.nodes)).sort();
  return Promise.all(names.map((name) => readNodeFigures(zk, name, logger)));
}

/** One node's record: its states, figures, IPMI access and running VMs. */
export interface NodeRecord {
  name: string;
  daemonMode: DaemonMode | undefined;
  daemonState: DaemonState | undefined;
  routerState: RouterState | undefined;
  domainState: NodeDomainState | undefined;
  figures: NodeFigures;
  ipmi: { host: string; user: string; pass: string };
  runningDomains: string[];
  /** `monitoring_health`: 0–100, or null when unknown. */
  health: number | null;
}

/** Reads one node's record, or undefined when the node does not exist. */
export async function readNodeRecord(zk: ZkClient, name: string, logger?: Logger): Promise<NodeRecord | undefined> {
  const k = nodeKeys(name);
  if ((await zk.exists(k.root.path)) === undefined) return undefined;
  const [figures, [daemonMode, daemonState, routerState, domainState, running, host, user, pass, health]] = await Promise.all([
    readNodeFigures(zk, name, logger),
    readKeys(zk, [k.daemonMode, k.daemonState, k.routerState, k.domainState, k.runningDomains, k.ipmiHostname, k.ipmiUsername, k.ipmiPassword, k.monitoringHealth], opts(logger)),
  ]);
  return { name, daemonMode, daemonState, routerState, domainState, figures, ipmi: { host, user, pass }, runningDomains: running, health };
}

/** Every node's record under `/nodes`, sorted by name. */
export async function readNodeRecords(zk: ZkClient, logger?: Logger): Promise<NodeRecord[]> {
  const names = (await zk.children(paths.nodes)).sort();
  const records = await Promise.all(names.map((n) => readNodeRecord(zk, n, logger)));
  return records.filter((r): r is NodeRecord => r !== undefined);
}

const MEMORY_EL = /<memory(\s[^>]*)?>\s*(\d+)\s*<\/memory>/;
const UNIT_ATTR = /\sunit\s*=\s*(['"])([^'"]*)\1/;
const VCPU_EL = /<vcpu(\s[^>]*)?>\s*(\d+)\s*<\/vcpu>/;
const NAME_EL = /<name>\s*([^<]+?)\s*<\/name>/;

/** What placement needs from a stored domain XML; parts that cannot be read are absent. */
export interface DomainXmlFacts {
  name?: string;
  /** `<memory>` in MiB (libvirt's default unit KiB), rounded up. */
  memoryMiB?: number;
  vcpus?: number;
  /** The VNIs of the `vmbr<vni>` bridges its interfaces name (`xmlNetworks`), ascending; may be empty. */
  networks: number[];
}

/**
 * The size of a stored domain XML: the one reading of `<memory>` (with its unit), `<vcpu>` and
 * `<name>` that vmd, keepaliled and the CLI share, and the client networks it needs. Not a
 * validating parser: libvirt validates the document when the domain is created.
 */
export function domainXmlFacts(xml: string): DomainXmlFacts {
  const mem = MEMORY_EL.exec(xml);
  const mib = mem ? libvirtMemoryMiB(Number(mem[2]), UNIT_ATTR.exec(mem[1] ?? '')?.[2]) : undefined;
  const cpu = VCPU_EL.exec(xml);
  const name = NAME_EL.exec(xml)?.[1];
  return {
    ...(name !== undefined ? { name } : {}),
    ...(mib !== undefined ? { memoryMiB: Math.ceil(mib) } : {}),
    ...(cpu ? { vcpus: Number(cpu[2]) } : {}),
    networks: xmlNetworks(xml),
  };
}

/** A VM's placement facts: its keys and the size from its XML. */
export interface VmFacts {
  uuid: string;
  /** The `/domains/<uuid>` value, else the XML's `<name>`, else the UUID. */
  name: string;
  state: VmState | undefined;
  node: string;
  lastNode: string;
  /** At least 1 (an unreadable size places the VM as if it needed 1 MiB, logged). */
  memoryMiB: number;
  vcpus: number;
  selector: VmSelector;
  nodeLimit: string[];
  autostart: boolean;
  migrationMethod: MigrationMethod;
  failedReason: string;
  rbdList: string[];
  /** The VNIs of the `vmbr<vni>` bridges of its interfaces (a target must have them up). */
  networks: number[];
}

/** Reads a VM's placement facts; undefined when the VM does not exist. */
export async function readVmFacts(zk: ZkClient, uuid: string, logger?: Logger): Promise<VmFacts | undefined> {
  const d = domainKeys(uuid);
  const raw = await zk.read(d.root.path);
  if (raw === undefined) return undefined;
  const [xml, state, node, lastNode, selector, nodeLimit, autostart, method, failedReason, rbdList] = await readKeys(
    zk, [d.xml, d.state, d.node, d.lastNode, d.nodeSelector, d.nodeLimit, d.nodeAutostart, d.migrationMethod, d.failedReason, d.rbdList], opts(logger),
  );
  const size = domainXmlFacts(xml);
  if (size.memoryMiB === undefined) logger?.warn({ vm: uuid, key: d.xml.path }, 'cannot read the memory size from the XML; placing it as if it needed 1 MiB');
  const name = decodeKey(d.root, raw);
  return {
    uuid, name: name || size.name || uuid, state, node, lastNode,
    memoryMiB: Math.max(1, size.memoryMiB ?? 1), vcpus: size.vcpus ?? 1,
    selector, nodeLimit, autostart, migrationMethod: method, failedReason, rbdList, networks: size.networks,
  };
}

function opts(logger: Logger | undefined): { logger?: Logger } {
  return logger ? { logger } : {};
}
