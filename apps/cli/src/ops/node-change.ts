import { isZkError, paths, type ZkClient } from '@pvc/zk';
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

async function versioned(zk: ZkClient, path: string): Promise<{ data: string; version: number }> {
  try {
    const s = await zk.get(path);
    return { data: s.data.trim(), version: s.stat.version };
  } catch (err) {
    if (isZkError(err, 'NO_NODE')) throw refused(`bad data in Zookeeper: ${path} is missing`);
    throw err;
  }
}

/** Reads what the planners need about a node (it must exist). */
export async function readNodeFacts(zk: ZkClient, name: string): Promise<ReadFacts> {
  const node = await findNode(zk, name);
  const k = paths.node(node);
  const [mode, daemonState, routerState] = await Promise.all([k.daemonMode, k.daemonState, k.routerState].map((p) => zk.read(p)));
  const [domain, primary] = await Promise.all([versioned(zk, k.domainState), versioned(zk, paths.config.primaryNode)]);
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
  const path = plan.key === 'domainstate' ? paths.node(r.facts.node).domainState : paths.config.primaryNode;
  try {
    await zk.set(path, plan.value, { version: r.versions[plan.key] });
  } catch (err) {
    if (isZkError(err, 'BAD_VERSION')) throw refused(`${path} changed while pvc was writing it: nothing written, try again`);
    throw err;
  }
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
  const primaryNode = ((await zk.read(paths.config.primaryNode)) ?? 'none').trim();
  return { node, primary: primaryNode === node, primaryNode };
}
