/**
 * `pvc network add|remove --wait`: netd on every node writes `/nodes/<node>/networks_up` (ours, not
 * the original's: the VNIs whose `vmbr<vni>` is up there, after the devices, the primary's gateway
 * and dnsmasq, and the firewall of its pass). The nodes that count are those whose `daemonstate` is
 * `run` and that have the key: a node of the original, one without networking (no key) or one that
 * is not running will not act, so it is not waited for.
 *
 * @module
 */
import { networkKeys, nodeKeys, readKeys, type ZkClient } from '@pvc/zk';
import type { CliContext } from '../context.js';
import { listNodes } from '../lookup.js';
import { waitUntil, type WaitStep } from '../wait.js';

/** What a wait waits for: the network up on every reporting node, or on none. */
export type NetworkWaitGoal = 'up' | 'gone';

/** One node as the wait sees it: running, and which networks it reports (undefined = no key). */
export interface ReportingNode {
  readonly name: string;
  readonly running: boolean;
  readonly networks: readonly number[] | undefined;
}

/** Every node's daemon state and `networks_up`, by name. */
export async function readReportingNodes(zk: ZkClient): Promise<ReportingNode[]> {
  return Promise.all((await listNodes(zk)).map(async (name) => {
    const k = nodeKeys(name);
    const [daemonState, networks] = await readKeys(zk, [k.daemonState, k.networksUp]);
    return { name, running: daemonState === 'run', networks };
  }));
}

/**
 * One look (pure): `up` is done when every running node with `networks_up` lists `vni`, `gone` when
 * none does. With no such node there is nothing to wait on: done, saying so. `exists` = the network
 * is still in Zookeeper: an `up` wait fails when someone removed it meanwhile.
 */
export function networkWaitStep(vni: number, goal: NetworkWaitGoal, nodes: readonly ReportingNode[], exists: boolean): WaitStep {
  if (goal === 'up' && !exists) return { done: false, failed: `network ${vni} was removed meanwhile` };
  const reporting = nodes.filter((n) => n.running && n.networks !== undefined);
  if (reporting.length === 0) return { done: true, progress: 'no running node reports its networks (networks_up): nothing to wait on' };
  const has = reporting.filter((n) => n.networks?.includes(vni)).map((n) => n.name);
  const pending = goal === 'up' ? reporting.filter((n) => !has.includes(n.name)).map((n) => n.name) : has;
  const word = goal === 'up' ? 'up' : 'gone';
  const doneOn = reporting.length - pending.length;
  if (pending.length === 0) return { done: true, progress: `vmbr${vni} ${word} on ${reporting.length === 1 ? 'the' : `all ${reporting.length}`} running node${reporting.length === 1 ? '' : 's'} (${reporting.map((n) => n.name).join(', ')})` };
  return { done: false, progress: `vmbr${vni} ${word} on ${doneOn}/${reporting.length} nodes; waiting for ${pending.join(', ')}` };
}

/**
 * Follows `networks_up` until {@link networkWaitStep} is done (returns the last progress), or fails
 * (exit 1), or `waitS` runs out (exit 4).
 */
export async function waitForNetwork(ctx: CliContext, zk: ZkClient, vni: number, goal: NetworkWaitGoal, waitS: number): Promise<string> {
  const what = `network ${vni} ${goal === 'up' ? 'up on the nodes' : 'gone from the nodes'}`;
  const last = await waitUntil(ctx, what, waitS, async () => {
    const [nodes, root] = await Promise.all([readReportingNodes(zk), zk.exists(networkKeys(vni).root.path)]);
    return networkWaitStep(vni, goal, nodes, root !== undefined);
  });
  return last ?? '';
}
