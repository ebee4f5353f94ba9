import { clusterKeys, domainKeys, nodeKeys, readKey, readKeys, type ZkClient } from '@pvc/zk';
import { listNodes, listVmRefs } from '../lookup.js';
import type { WaitStep } from '../wait.js';
import { describeFlushFailures, readFlushFailures } from './flush-failures.js';
import type { NodeAction } from './node-plan.js';

/**
 * One look at a node change in progress, for `--wait` (polled by `waitUntil`): done, failed (with
 * the reason) or the progress to show.
 */
export type NodeWaiter = (zk: ZkClient, node: string) => Promise<WaitStep>;

/** Daemon states in which a node will not finish a change. */
const GONE = new Set(['dead', 'fenced', 'stop']);

interface VmLook {
  name: string;
  state: string;
  node: string;
  lastNode: string;
}

async function lookVms(zk: ZkClient, only?: ReadonlySet<string>): Promise<(VmLook & { uuid: string })[]> {
  const refs = (await listVmRefs(zk)).filter((r) => only === undefined || only.has(r.uuid));
  return Promise.all(refs.map(async (r) => {
    const d = domainKeys(r.uuid);
    const [state, node, lastNode] = await readKeys(zk, [d.state, d.node, d.lastNode]);
    return { uuid: r.uuid, name: r.name, state: state ?? '', node, lastNode };
  }));
}

function describeVm(v: VmLook, here: string): string {
  return v.node !== '' && v.node !== here ? `${v.name} (${v.state} → ${v.node})` : `${v.name} (${v.state})`;
}

async function nodeStates(zk: ZkClient, node: string): Promise<{ daemon: string; domain: string }> {
  const k = nodeKeys(node);
  const [daemon, domain] = await readKeys(zk, [k.daemonState, k.domainState]);
  return { daemon: daemon ?? '', domain: domain ?? '' };
}

/**
 * Flush: done at `flushed` — a failure (exit 1) naming each VM the flush could not move and its
 * reason when any VM carries one (vmd writes them before `flushed`); shows the VMs still running
 * on the node (its `runningdomains`) meanwhile.
 */
export const waitFlush: NodeWaiter = async (zk, node) => {
  const s = await nodeStates(zk, node);
  if (s.domain === 'flushed') {
    const failures = await readFlushFailures(zk, node);
    if (failures.length === 0) return { done: true, progress: 'no VMs left' };
    const n = failures.length;
    return { done: false, failed: `node ${node} is flushed, but ${n} VM${n === 1 ? '' : 's'} could not be moved: ${describeFlushFailures(failures)}` };
  }
  if (s.domain !== 'flush') return { done: false, failed: `domainstate of ${node} changed to "${s.domain}" (another command or a fence)` };
  if (GONE.has(s.daemon)) return { done: false, failed: `the daemon on ${node} is now ${s.daemon}` };
  const running = await readKey(zk, nodeKeys(node).runningDomains);
  if (running.length === 0) return { done: false, progress: 'no VMs left; waiting for the node to write flushed' };
  const vms = await lookVms(zk, new Set(running));
  const unknown = running.length - vms.length;
  const listed = vms.map((v) => describeVm(v, node)).concat(unknown > 0 ? [`${unknown} unknown`] : []);
  return { done: false, progress: `${running.length} VM${running.length === 1 ? '' : 's'} still on ${node}: ${listed.join(', ')}` };
};

/** Ready: done at `ready`; shows the VMs on their way back (lastnode = the node, or moving to it). */
export const waitReady: NodeWaiter = async (zk, node) => {
  const s = await nodeStates(zk, node);
  if (s.domain === 'ready') return { done: true, progress: 'all back' };
  if (s.domain !== 'unflush') return { done: false, failed: `domainstate of ${node} changed to "${s.domain}" (another command or a fence)` };
  if (GONE.has(s.daemon)) return { done: false, failed: `the daemon on ${node} is now ${s.daemon}` };
  const coming = (await lookVms(zk)).filter((v) => v.lastNode === node || (v.node === node && v.state.startsWith('migrate')));
  if (coming.length === 0) return { done: false, progress: 'no VMs to bring back; waiting for the node to write ready' };
  const listed = coming.map((v) => (v.lastNode === node ? `${v.name} (${v.state} on ${v.node})` : `${v.name} (${v.state})`));
  return { done: false, progress: `${coming.length} VM${coming.length === 1 ? '' : 's'} coming back to ${node}: ${listed.join(', ')}` };
};

async function routerStates(zk: ZkClient): Promise<{ primary: string; routers: Map<string, { router: string; daemon: string }> }> {
  const primary = await readKey(zk, clusterKeys.primaryNode);
  const routers = new Map<string, { router: string; daemon: string }>();
  for (const n of await listNodes(zk)) {
    const k = nodeKeys(n);
    const [mode, router, daemon] = await readKeys(zk, [k.daemonMode, k.routerState, k.daemonState]);
    if (mode === 'coordinator') routers.set(n, { router: router ?? '', daemon: daemon ?? '' });
  }
  return { primary, routers };
}

function routerProgress(primary: string, routers: Map<string, { router: string }>): string {
  const states = [...routers.entries()].map(([n, r]) => `${n} ${r.router || '-'}`).join(', ');
  return `primary_node ${primary || 'none'}; coordinators: ${states}`;
}

/** Primary: done when `primary_node` names the node and its routerstate is `primary`. */
export const waitPrimary: NodeWaiter = async (zk, node) => {
  const { primary, routers } = await routerStates(zk);
  const me = routers.get(node);
  const progress = routerProgress(primary, routers);
  if (primary !== node) return { done: false, failed: `primary_node now names ${primary || 'none'}`, progress };
  if (me && GONE.has(me.daemon)) return { done: false, failed: `the daemon on ${node} is now ${me.daemon}`, progress };
  return { done: me?.router === 'primary', progress };
};

/**
 * Secondary: done when the node's routerstate is `secondary` and `primary_node` names another node
 * or `none` (no other coordinator could take over).
 */
export const waitSecondary: NodeWaiter = async (zk, node) => {
  const { primary, routers } = await routerStates(zk);
  const me = routers.get(node);
  const progress = routerProgress(primary, routers);
  if (primary === node) return { done: false, failed: `primary_node names ${node} again`, progress };
  if (me && GONE.has(me.daemon)) return { done: false, failed: `the daemon on ${node} is now ${me.daemon}`, progress };
  return { done: me?.router === 'secondary', progress };
};

/** The waiter of each action. */
export const WAITERS: Readonly<Record<NodeAction, NodeWaiter>> = {
  flush: waitFlush, ready: waitReady, primary: waitPrimary, secondary: waitSecondary,
};
