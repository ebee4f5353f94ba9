/**
 * Pure plans of the state-changing node commands (inventory §1.2, §2.3, §4): what `pvc node
 * flush|ready|primary|secondary` writes for a node as it is now, or why it writes nothing.
 */

/** A node's states as the planners need them. */
export interface NodeFacts {
  node: string;
  mode: string;
  daemonState: string;
  routerState: string;
  domainState: string;
  /** `/config/primary_node` (`none` when there is no primary). */
  primaryNode: string;
}

/**
 * - `write`: set `key` (`domainstate` or `primary_node`) to `value`.
 * - `already`: nothing to write, exit 0; `inProgress` when the change is under way but not done
 *   (`--wait` then waits for it).
 * - `refuse`: nothing written, exit 1 with `message`.
 */
export type NodePlan =
  | { kind: 'write'; key: 'domainstate' | 'primary_node'; value: string; message: string }
  | { kind: 'already'; inProgress: boolean; message: string }
  | { kind: 'refuse'; message: string };

/** The state-changing node commands. */
export type NodeAction = 'flush' | 'ready' | 'primary' | 'secondary';

const notRunning = (f: NodeFacts, what: string): NodePlan => ({
  kind: 'refuse',
  message: `node ${f.node} cannot ${what}: its daemon is "${f.daemonState || '(empty)'}", not "run"`,
});

/** `flush`: domainstate `flush` (the node's vmd moves its VMs away, then writes `flushed`). */
export function planFlush(f: NodeFacts): NodePlan {
  if (f.domainState === 'flushed') return { kind: 'already', inProgress: false, message: `node ${f.node} is already flushed` };
  if (f.daemonState !== 'run') return notRunning(f, 'be flushed');
  if (f.domainState === 'flush') return { kind: 'already', inProgress: true, message: `node ${f.node} is already being flushed` };
  return { kind: 'write', key: 'domainstate', value: 'flush', message: `Flushing node ${f.node}: its VMs move to other nodes (domainstate flush)` };
}

/** `ready`: domainstate `unflush` (the node's vmd brings its VMs back, then writes `ready`). */
export function planReady(f: NodeFacts): NodePlan {
  if (f.domainState === 'ready') return { kind: 'already', inProgress: false, message: `node ${f.node} is already ready` };
  if (f.daemonState !== 'run') return notRunning(f, 'be readied');
  if (f.domainState === 'unflush') return { kind: 'already', inProgress: true, message: `node ${f.node} is already being readied` };
  return { kind: 'write', key: 'domainstate', value: 'unflush', message: `Readying node ${f.node}: its VMs come back (domainstate unflush)` };
}

const notCoordinator = (f: NodeFacts): NodePlan => ({
  kind: 'refuse',
  message: `node ${f.node} is a ${f.mode || '(no mode)'}, not a coordinator: only coordinators hold the primary role`,
});

/** `primary`: `/config/primary_node` = the node (its keepaliled takes over, the old primary relinquishes). */
export function planPrimary(f: NodeFacts): NodePlan {
  if (f.mode !== 'coordinator') return notCoordinator(f);
  if (f.primaryNode === f.node && f.routerState === 'primary') {
    return { kind: 'already', inProgress: false, message: `node ${f.node} is already primary` };
  }
  if (f.daemonState !== 'run') return notRunning(f, 'become primary');
  if (f.primaryNode === f.node) {
    return { kind: 'already', inProgress: true, message: `node ${f.node} is already becoming primary (coordinator state ${f.routerState})` };
  }
  return { kind: 'write', key: 'primary_node', value: f.node, message: `Making node ${f.node} the primary coordinator (was ${f.primaryNode || 'none'})` };
}

/**
 * `secondary`: only for the node `/config/primary_node` names: it becomes `none`; the node
 * relinquishes and the other `run` coordinators contend (it does not contend for that change).
 */
export function planSecondary(f: NodeFacts): NodePlan {
  if (f.mode !== 'coordinator') return notCoordinator(f);
  if (f.primaryNode !== f.node && f.routerState === 'secondary') {
    return { kind: 'already', inProgress: false, message: `node ${f.node} is already secondary (the primary is ${f.primaryNode || 'none'})` };
  }
  if (f.daemonState !== 'run') return notRunning(f, 'become secondary');
  if (f.primaryNode !== f.node) {
    return {
      kind: 'already', inProgress: true,
      message: `node ${f.node} is already handing over the primary role (primary_node is ${f.primaryNode || 'none'}; coordinator state ${f.routerState})`,
    };
  }
  return { kind: 'write', key: 'primary_node', value: 'none', message: `Releasing the primary role of node ${f.node} (primary_node none; another coordinator takes over)` };
}

/** The planner of an action. */
export const PLANNERS: Readonly<Record<NodeAction, (f: NodeFacts) => NodePlan>> = {
  flush: planFlush, ready: planReady, primary: planPrimary, secondary: planSecondary,
};
