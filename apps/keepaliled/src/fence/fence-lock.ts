import type { Clock } from '@pvc/runtime';
import { createLock, locks, type AcquireOptions, type ZkClient } from '@pvc/zk';

/** What {@link underFenceLock} needs. */
export interface FenceLockDeps {
  self: string;
  zk: ZkClient;
  clock: Clock;
  /** Breaks the lock of a holder known dead (see `LivenessTracker.deadHolderGuard`); absent = wait. */
  breakHolder?: AcquireOptions['breakHolder'];
}

/** How a run under the fence lock ended. */
export type FenceLockOutcome<T> =
  | { kind: 'busy' }
  | { kind: 'done'; value: T }
  /** `fn` failed after the lock was lost, the session suspended or `outer` aborted. */
  | { kind: 'interrupted'; reason: unknown };

/**
 * Runs `fn` holding the cluster fence lock (`/config/fence_lock`), so fencing, recovery and the
 * recovery retry never run at once anywhere in the cluster. `fn`'s signal aborts when the lock is
 * lost, our ZK session is suspended (no quorum) or `outer` aborts; nothing may be written after
 * that. `busy` when the lock was not acquired within `timeoutMs`. An error of `fn` while the
 * signal is not aborted is thrown.
 */
export async function underFenceLock<T>(
  deps: FenceLockDeps, outer: AbortSignal, timeoutMs: number, fn: (held: AbortSignal) => Promise<T>,
): Promise<FenceLockOutcome<T>> {
  const { zk, clock, self } = deps;
  const lock = createLock(zk, locks.fence, { clock, identifier: self });
  const breakHolder = deps.breakHolder;
  if (!(await lock.acquire({ timeoutMs, signal: outer, ...(breakHolder ? { breakHolder } : {}) }))) return { kind: 'busy' };
  const held = new AbortController();
  const stopOuter = (): void => held.abort(outer.reason);
  outer.addEventListener('abort', stopOuter, { once: true });
  const offLost = lock.onLost((reason) => held.abort(new Error(`fence lock lost: ${reason}`)));
  const offSuspended = zk.on('suspended', () => held.abort(new Error('ZK connection suspended')));
  try {
    return { kind: 'done', value: await fn(held.signal) };
  } catch (err) {
    if (!held.signal.aborted) throw err;
    return { kind: 'interrupted', reason: held.signal.reason };
  } finally {
    offLost();
    offSuspended();
    outer.removeEventListener('abort', stopOuter);
    await lock.release().catch(() => false);
  }
}
