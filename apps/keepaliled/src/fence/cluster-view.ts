import type { Logger } from '@pvc/runtime';
import { paths, readNodeFigures, type ZkClient } from '@pvc/zk';
import { libvirtMemoryMiB, type NodeFacts } from '@pvc/placement';

/** One node as a fencer sees it. Raw state text is kept: ZK may hold anything. */
export interface NodeRecord {
  name: string;
  daemonState: string;
  domainState: string;
  routerState: string;
  daemonMode: string;
  facts: NodeFacts;
  ipmi: { host: string; user: string; pass: string };
  runningDomains: string[];
}

/** One VM as recovery needs it. */
export interface DomainRecord {
  uuid: string;
  name: string;
  state: string;
  node: string;
  memoryMiB: number;
  vcpus: number;
  selector: string;
  nodeLimit: string;
  rbdList: string[];
}

/** Reads one node's record, or undefined when the node does not exist. */
export async function readNode(zk: ZkClient, logger: Logger, name: string): Promise<NodeRecord | undefined> {
  const k = paths.node(name);
  if ((await zk.exists(k.root)) === undefined) return undefined;
  const keys = [k.routerState, k.daemonMode, k.runningDomains, k.ipmiHostname, k.ipmiUsername, k.ipmiPassword] as const;
  const [facts, values] = await Promise.all([readNodeFigures(zk, name, logger), Promise.all(keys.map((key) => zk.read(key)))]);
  const v = (i: number): string => values[i] ?? '';
  return {
    name, daemonState: facts.daemonState, domainState: facts.domainState, routerState: v(0), daemonMode: v(1),
    runningDomains: v(2).split(/\s+/).filter((s) => s !== '' && s !== '0'),
    ipmi: { host: v(3), user: v(4), pass: v(5) },
    facts,
  };
}

/** Reads every node under `/nodes`, sorted by name. */
export async function readNodes(zk: ZkClient, logger: Logger): Promise<NodeRecord[]> {
  const names = (await zk.children(paths.nodes)).sort();
  const records = await Promise.all(names.map((n) => readNode(zk, logger, n)));
  return records.filter((r): r is NodeRecord => r !== undefined);
}


/** Memory (MiB) and vCPUs from a libvirt domain XML; undefined parts when they cannot be read. */
export function domainSize(xml: string): { memoryMiB?: number; vcpus?: number; name?: string } {
  const mem = /<memory(\s[^>]*)?>\s*(\d+)\s*<\/memory>/.exec(xml);
  const unit = /\sunit=['"](\w+)['"]/.exec(mem?.[1] ?? '')?.[1];
  const cpu = /<vcpu[^>]*>\s*(\d+)\s*<\/vcpu>/.exec(xml);
  const name = /<name>\s*([^<]+?)\s*<\/name>/.exec(xml);
  const mib = mem ? libvirtMemoryMiB(Number(mem[2]), unit) : undefined;
  return {
    ...(mib !== undefined ? { memoryMiB: Math.ceil(mib) } : {}),
    ...(cpu ? { vcpus: Number(cpu[1]) } : {}),
    ...(name?.[1] !== undefined ? { name: name[1] } : {}),
  };
}

/** Reads every VM whose `node` is `node`, sorted by UUID. */
export async function readDomainsOn(zk: ZkClient, logger: Logger, node: string): Promise<DomainRecord[]> {
  const uuids = (await zk.children(paths.domains)).sort();
  // In parallel: recovery time grows with the number of VMs in the cluster, not with round trips.
  const records = await Promise.all(uuids.map((uuid) => readDomainIf(zk, logger, uuid, node)));
  return records.filter((r): r is DomainRecord => r !== undefined);
}

async function readDomainIf(zk: ZkClient, logger: Logger, uuid: string, node: string): Promise<DomainRecord | undefined> {
  const d = paths.domain(uuid);
  if ((await zk.read(d.node)) !== node) return undefined;
  const [xml, state, selector, nodeLimit, rbd] = await Promise.all([d.xml, d.state, d.nodeSelector, d.nodeLimit, d.rbdList].map((p) => zk.read(p)));
  const size = domainSize(xml ?? '');
  if (size.memoryMiB === undefined) logger.warn({ vm: uuid, key: d.xml }, 'cannot read the memory size from the XML; placing it as if it needed 1 MiB');
  return {
    uuid, name: size.name ?? uuid, state: state ?? '', node,
    memoryMiB: Math.max(1, size.memoryMiB ?? 1), vcpus: size.vcpus ?? 1,
    selector: selector ?? '', nodeLimit: nodeLimit ?? '',
    rbdList: (rbd ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '' && s !== 'None'),
  };
}
