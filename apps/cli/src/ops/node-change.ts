import {
  clusterKeys, isOneOf, isZkError, NODE_DOMAIN_STATES, nodeKeys, pair, readKey, readKeys, readKeyWithStat, type KeySpec, type WritePair, type ZkClient,
} from '@pvc/zk';
import type { CliContext } from '../context.js';
import { refused } from '../errors.js';
import { findNode } from '../lookup.js';
import { waitUntil } from '../wait.js';
import { PLANNERS, type NodeAction, type NodeFacts, type NodePlan } from './node-plan.js';
import { WAITERS } from './node-wait.js';

/** A node's facts plus the versions of the keys a plan may write (for a conditional set). */
interface ReadFacts {
  facts: NodeFacts;
  versions: { domainstate: number; primary_node: number };
}

/** A key's decoded value (unknown → `''`) and the version read, for a conditional write. */
async function versioned<T extends string>(zk: ZkClient, spec: KeySpec<T, T | undefined>): Promise<{ data: string; version: number }> {
  const s = await readKeyWithStat(zk, spec);
  if (s === undefined) throw refused(`bad data in Zookeeper: ${spec.path} is missing`);
  return { data: s.value ?? '', version: s.stat.version };
}

/** Reads what the planners need about a node (it must exist). */
export async function readNodeFacts(zk: ZkClient, name: string): Promise<ReadFacts> {
  const node = await findNode(zk, name);
  const k = nodeKeys(node);
  const [mode, daemonState, routerState] = await readKeys(zk, [k.daemonMode, k.daemonState, k.routerState]);
  const [domain, primary] = await Promise.all([versioned(zk, k.domainState), versioned(zk, clusterKeys.primaryNode)]);
  return {
    facts: {
      node, mode: mode ?? '', daemonState: daemonState ?? '', routerState: routerState ?? '',
      domainState: domain.data, primaryNode: primary.data,
    },
    versions: { domainstate: domain.version, primary_node: primary.version },
  };
}

/**
 * Writes a plan's key, only if it is still at the version the plan was made from (someone else's
 * change meanwhile → exit 1, nothing written, try again).
 */
async function applyPlan(zk: ZkClient, r: ReadFacts, plan: Extract<NodePlan, { kind: 'write' }>): Promise<void> {
  const [path, data] = encodePlan(r.facts.node, plan);
  try {
    await zk.set(path, data, { version: r.versions[plan.key] });
  } catch (err) {
    if (isZkError(err, 'BAD_VERSION')) throw refused(`${path} changed while pvc was writing it: nothing written, try again`);
    throw err;
  }
}

/** The key and encoded value a plan writes (through the key table). */
function encodePlan(node: string, plan: Extract<NodePlan, { kind: 'write' }>): WritePair {
  if (plan.key === 'primary_node') return pair(clusterKeys.primaryNode, plan.value);
  if (!isOneOf(NODE_DOMAIN_STATES, plan.value)) throw new Error(`not a node domain state: ${plan.value}`);
  return pair(nodeKeys(node).domainState, plan.value);
}

/** What to say once a `--wait` ends. */
const DONE: Readonly<Record<NodeAction, (node: string) => string>> = {
  flush: (n) => `Node ${n} is flushed`,
  ready: (n) => `Node ${n} is ready`,
  primary: (n) => `Node ${n} is primary`,
  secondary: (n) => `Node ${n} is secondary`,
};

/**
 * `pvc node flush|ready|primary|secondary <node>`: plan, refuse (exit 1, nothing written) or
 * write, then with `waitS` follow the change until it is done, has failed, or time runs out.
 */
export async function changeNode(ctx: CliContext, action: NodeAction, name: string, waitS: number | undefined): Promise<void> {
  const { zk } = await ctx.cluster();
  const r = await readNodeFacts(zk, name);
  const plan = PLANNERS[action](r.facts);
  if (plan.kind === 'refuse') throw refused(plan.message);
  if (plan.kind === 'write') await applyPlan(zk, r, plan);
  ctx.output.line(plan.message);
  if (waitS === undefined || (plan.kind === 'already' && !plan.inProgress)) return;
  const node = r.facts.node;
  await waitUntil(ctx, `${action} ${node}`, waitS, () => WAITERS[action](zk, node));
  ctx.output.line(DONE[action](node));
}

/** `pvc node is-primary <node>`: whether `/config/primary_node` names the node. */
export async function isPrimary(zk: ZkClient, name: string): Promise<{ node: string; primary: boolean; primaryNode: string }> {
  const node = await findNode(zk, name);
  const primaryNode = await readKey(zk, clusterKeys.primaryNode);
  return { node, primary: primaryNode === node, primaryNode };
}
