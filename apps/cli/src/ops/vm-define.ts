import { selectTarget, type NodeFacts } from '@pvc/placement';
import {
  clusterKeys, domainKeys, newDomainObject, readAllNodeFigures, readKey, xmlNetworks, type DomainTag, type NodeFigures, type ObjectDefinition, type VmSelector,
  type ZkClient,
} from '@pvc/zk';
import { refused } from '../errors.js';
import { parseDomainXml, serializeDomain, withUuid, type DomainXml } from './domain-xml.js';
import {
  guardUnique, parseLimitOption, parseMethodOption, parsePositiveInt, parseSelectorOption, parseTagName, whyTooBig,
} from './vm-config-guards.js';

/** Options of `pvc vm define`, as given on the command line (validated here). */
export interface DefineOptions {
  target?: string;
  nodeLimit?: string;
  nodeSelector?: string;
  autostart?: boolean;
  migrationMethod?: string;
  migrationMaxDowntime?: string;
  tags?: readonly string[];
  protectedTags?: readonly string[];
  profile?: string;
}

/** What `vm define` did. */
export interface DefineResult {
  name: string;
  uuid: string;
  node: string;
  /** True when the XML had no `<uuid>` and one was generated and inserted. */
  uuidGenerated: boolean;
  /** How the node was chosen: `given with --target` or placement's reason. */
  placement: string;
  rbdList: string[];
  tags: DomainTag[];
}

/** A checked definition, ready to be written in one transaction. */
export interface DefinePlan {
  result: DefineResult;
  object: ObjectDefinition;
}

/**
 * Checks an XML and the options against the cluster (inventory §5.5) and builds the domain object.
 * Throws a usage error (exit 2) for bad input and a refusal (exit 1) for a clash or no room;
 * writes nothing. `newUuid` supplies the UUID of an XML without one.
 */
export async function planDefine(zk: ZkClient, text: string, source: string, o: DefineOptions, newUuid: () => string): Promise<DefinePlan> {
  let dx = parseDomainXml(text, source);
  const selector = o.nodeSelector === undefined ? 'none' : parseSelectorOption(o.nodeSelector);
  const method = o.migrationMethod === undefined ? 'none' : parseMethodOption(o.migrationMethod);
  const downtime = o.migrationMaxDowntime === undefined ? 300 : parsePositiveInt(o.migrationMaxDowntime, '--migration-max-downtime');
  const tags = tagList(o.tags ?? [], o.protectedTags ?? []);
  const nodeLimit = o.nodeLimit === undefined ? [] : await parseLimitOption(zk, o.nodeLimit);
  await guardUnique(zk, dx.name, dx.uuid);
  const uuidGenerated = dx.uuid === undefined;
  if (uuidGenerated) dx = withUuid(dx, newUuid().toLowerCase());
  const uuid = dx.uuid ?? '';
  const nodes = await readAllNodeFigures(zk);
  const networks = xmlNetworks(text);
  const where = o.target === undefined
    ? await placeNew(zk, dx, nodes, { selector, limit: nodeLimit, networks })
    : givenTarget(dx, nodes, o.target, nodeLimit, networks);
  const object = newDomainObject({
    uuid, name: dx.name, xml: serializeDomain(dx), node: where.node, state: 'stop',
    profile: o.profile === undefined || o.profile === '' ? null : o.profile,
    rbdList: dx.rbdVolumes, autostart: o.autostart ?? false, migrationMethod: method,
    migrationMaxDowntimeMs: downtime, nodeLimit, nodeSelector: selector, tags,
  });
  return {
    result: { name: dx.name, uuid, node: where.node, uuidGenerated, placement: where.reason, rbdList: [...dx.rbdVolumes], tags },
    object,
  };
}

/** Checks, then writes every domain key in one transaction (nothing on any error). */
export async function defineVm(zk: ZkClient, text: string, source: string, o: DefineOptions, newUuid: () => string): Promise<DefineResult> {
  const plan = await planDefine(zk, text, source, o, newUuid);
  try {
    await zk.createObject(plan.object.root, plan.object.entries);
  } catch (err) {
    if ((await zk.exists(domainKeys(plan.result.uuid).root.path)) !== undefined) {
      throw refused(`UUID ${plan.result.uuid} was defined by someone else meanwhile; nothing written`);
    }
    throw err;
  }
  return plan.result;
}

function tagList(plain: readonly string[], protectedTags: readonly string[]): DomainTag[] {
  const out = new Map<string, DomainTag>();
  for (const t of plain) out.set(parseTagName(t), { name: t, type: 'user', protected: false });
  for (const t of protectedTags) out.set(parseTagName(t), { name: t, type: 'user', protected: true });
  return [...out.values()];
}

interface Where {
  node: string;
  reason: string;
}

/**
 * `--target`: a known node, not dead, inside the node limit, with the VM's networks up when its
 * `networks_up` is known, and the VM fits.
 */
function givenTarget(dx: DomainXml, nodes: readonly NodeFigures[], target: string, limit: readonly string[], networks: readonly number[]): Where {
  const node = nodes.find((n) => n.name === target);
  if (!node) throw refused(`--target: no node named "${target}" (nodes: ${nodes.map((n) => n.name).join(', ') || 'none'})`);
  if (node.daemonState === 'dead') throw refused(`--target: node ${target} is dead`);
  if (limit.length > 0 && !limit.includes(target)) throw refused(`--target: node ${target} is not in --node-limit ${limit.join(',')}`);
  const lacking = node.networks && networks.filter((vni) => !node.networks?.has(vni));
  if (lacking && lacking.length > 0) {
    throw refused(`--target: node ${target} lacks network${lacking.length === 1 ? '' : 's'} ${lacking.map((v) => `${v} (vmbr${v})`).join(', ')} (not in its networks_up)`);
  }
  const why = whyTooBig(node, dx.memoryMiB, dx.vcpus);
  if (why !== null) throw refused(`cannot define VM ${dx.name}: ${why}`);
  return { node: target, reason: 'given with --target' };
}

/**
 * No `--target`: placement over every node (none is "current"), with nodes that fail the size
 * guards excluded (and nodes known to lack one of the VM's networks: placement's check); when none
 * is eligible the refusal carries each node's reason.
 */
async function placeNew(zk: ZkClient, dx: DomainXml, nodes: readonly NodeFigures[], o: { selector: VmSelector; limit: readonly string[]; networks: readonly number[] }): Promise<Where> {
  const tooBig = new Map<string, string>();
  for (const n of nodes) {
    const why = whyTooBig(n, dx.memoryMiB, dx.vcpus);
    if (why !== null) tooBig.set(n.name, why);
  }
  const clusterSelector = await readKey(zk, clusterKeys.migrationTargetSelector);
  const r = selectTarget({
    vm: { name: dx.name, memoryMiB: dx.memoryMiB, vcpus: dx.vcpus, currentNode: '', selector: o.selector, nodeLimit: o.limit, networks: o.networks },
    nodes: nodes as readonly NodeFacts[], clusterSelector, exclude: [...tooBig.keys()],
  });
  if (r.ok) return { node: r.node, reason: r.reason };
  const reason = r.code === 'NO_ELIGIBLE_NODE' && r.rejected.length > 0
    ? r.rejected.map((x) => `${x.node}: ${x.why === 'excluded' ? (tooBig.get(x.node) ?? x.why) : x.why}`).join('; ')
    : r.reason;
  throw refused(`no node can take VM ${dx.name}: ${reason}`);
}
