/**
 * The `failedreason` texts a node flush writes (docs/vmd.md "Node flush and ready"). They are a
 * contract with `pvc node info` and `pvc node flush --wait`, which find a flush's failures by the
 * prefix `Flush of <node>: ` on VMs whose node or lastnode is that node (apps/cli/src/ops/flush-failures.ts).
 */

/** Every `failedreason` a flush of `self` writes starts with this. */
export function flushReasonPrefix(self: string): string {
  return `Flush of ${self}: `;
}

/** A VM shut down for lack of a target (`reason` = placement's, naming each node and why it does not fit). */
export function noTargetReason(self: string, reason: string): string {
  return `${flushReasonPrefix(self)}no target node fits (${reason}); shut down, node_autostart set (started again by node ready)`;
}

/**
 * A VM given up on after `rounds` failed moves (`target` = the last one's; undefined = a shutdown
 * for lack of a target that never ended). The sender's own `Migration to <t> failed: ` is dropped
 * from the last error.
 */
export function gaveUpReason(self: string, target: string | undefined, rounds: number, lastError: string): string {
  const last = lastError.replace(/^Migration to \S+ failed: /, '');
  const what = target === undefined ? 'shutdown (no target)' : `migration to ${target}`;
  return `${flushReasonPrefix(self)}${what} failed ${rounds} time${rounds === 1 ? '' : 's'}: ${last}`;
}
