import { domainKeys, readKeys, type ZkClient } from '@pvc/zk';
import { listVmRefs } from '../lookup.js';

/**
 * What a node flush could not do, as vmd records it (docs/vmd.md "Node flush and ready"): every VM
 * it could not move gets a `failedreason` starting with `Flush of <node>: ` — shut down for lack
 * of a target (state `stop`, `node_autostart` True) or given up on after its moves failed (still
 * running on the node in `start`). No key of its own: the original's layout is kept.
 */
export interface FlushFailure {
  uuid: string;
  name: string;
  state: string;
  node: string;
  lastNode: string;
  /** The whole `failedreason`, `Flush of <node>: …`. */
  reason: string;
}

/** The prefix of every `failedreason` a flush of `node` writes (vmd's `flushReasonPrefix`). */
export function flushReasonPrefix(node: string): string {
  return `Flush of ${node}: `;
}

/** The VMs whose node or lastnode is `node` and whose `failedreason` is a flush failure of that node, by name. */
export async function readFlushFailures(zk: ZkClient, node: string): Promise<FlushFailure[]> {
  const prefix = flushReasonPrefix(node);
  const vms = await Promise.all((await listVmRefs(zk)).map(async (r) => {
    const d = domainKeys(r.uuid);
    const [state, vmNode, lastNode, reason] = await readKeys(zk, [d.state, d.node, d.lastNode, d.failedReason]);
    return { uuid: r.uuid, name: r.name, state: state ?? '', node: vmNode, lastNode, reason };
  }));
  return vms.filter((v) => (v.node === node || v.lastNode === node) && v.reason.startsWith(prefix));
}

/** One line naming each VM and its reason (quoted: reasons contain `;` and `:`). */
export function describeFlushFailures(failures: readonly FlushFailure[]): string {
  return failures.map((f) => `${f.name} (${f.state} on ${f.node}): ${JSON.stringify(f.reason)}`).join('; ');
}
