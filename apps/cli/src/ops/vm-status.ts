import { createLock, domainKeys, locks, nodeKeys, readKey, readKeyIfExists, readKeys, type VmState, type ZkClient } from '@pvc/zk';
import type { CliContext } from '../context.js';
import { refused } from '../errors.js';
import type { VmRef } from '../lookup.js';
import { listNodes } from '../lookup.js';

/**
 * What a state change or its `--wait` looks at: the VM's own keys and where it really runs
 * (the nodes whose `runningdomains` list it; keepaliled rewrites that list at every keepalive).
 */
export interface VmStatus {
  /** `''` when empty or not a VM state. */
  state: VmState | '';
  node: string;
  lastNode: string;
  failedReason: string;
  /** Nodes whose `runningdomains` list the VM, sorted. */
  runningOn: string[];
}

/**
 * Reads a VM's state keys and the nodes it runs on. A vanished VM is an error (exit 1). A state
 * that is empty or not one of the original's reads as `''` (unknown; a bad value is a
 * `pvc: warning` line naming it): the planners then allow only what needs no known state.
 */
export async function readVmStatus(zk: ZkClient, ref: VmRef): Promise<VmStatus> {
  const d = domainKeys(ref.uuid);
  const [state, [node, lastNode, failedReason]] = await Promise.all([
    readKeyIfExists(zk, d.state), readKeys(zk, [d.node, d.lastNode, d.failedReason]),
  ]);
  if (state === undefined && (await zk.exists(d.state.path)) === undefined) {
    throw refused(`VM "${ref.name}" (${ref.uuid}) disappeared, or has no state key`);
  }
  return { state: state ?? '', node, lastNode, failedReason, runningOn: await runningOnNodes(zk, ref.uuid) };
}

/** The nodes whose `runningdomains` list the VM, sorted. */
export async function runningOnNodes(zk: ZkClient, uuid: string): Promise<string[]> {
  const nodes = await listNodes(zk);
  const lists = await Promise.all(nodes.map((n) => readKey(zk, nodeKeys(n).runningDomains)));
  return nodes.filter((_, i) => (lists[i] ?? []).includes(uuid));
}

/** One line about a status for `--wait` progress, e.g. `shutdown, node hv1, running on hv1`. */
export function describeStatus(s: VmStatus): string {
  const where = s.runningOn.length === 0 ? 'not running' : `running on ${s.runningOn.join(', ')}`;
  return `${s.state}, node ${s.node || '(none)'}, ${where}`;
}

/** How long a command waits for the VM's state lock when no `--wait-timeout` applies, seconds. */
export const LOCK_TIMEOUT_S = 60;

/**
 * Runs `fn` holding the kazoo exclusive Lock on `/domains/<uuid>/state`, like the original API's
 * `change_state`/`move`/`migrate` (vmd's migration sender holds it for a whole migration, so a
 * change queues behind one). Gives up after `timeoutS` with a one-line error (exit 1).
 */
export async function withStateLock<T>(ctx: CliContext, zk: ZkClient, ref: VmRef, timeoutS: number, fn: () => Promise<T>): Promise<T> {
  const lock = createLock(zk, locks.domainState(ref.uuid), { clock: ctx.io.clock });
  const got = await lock.acquire({ timeoutMs: timeoutS * 1000, ...(ctx.io.signal ? { signal: ctx.io.signal } : {}) });
  if (!got) {
    throw refused(`VM "${ref.name}": its state lock ${lock.path} stayed held by another change (a migration?) for ${timeoutS} s; nothing changed`);
  }
  try {
    return await fn();
  } finally {
    await lock.release().catch(() => undefined);
  }
}
