import type { RbdHeldLock } from '@pvc/rpc';
import { describeError } from '@pvc/runtime';
import type { RbdLocks } from './rbd-locks.js';

/** Outcome of the lock flush before one start attempt. */
export type RbdGuardVerdict =
  | { kind: 'go' }
  /** Flush failed; the start is not attempted now and is retried by the start queue (growing delay). */
  | { kind: 'retry'; reason: string; attempt: number }
  /**
   * The VM goes to `fail` with `reason` as failedreason: at once when another node holds a lock
   * (`held`), else after `maxFailures` failed flushes in a row.
   */
  | { kind: 'fail'; reason: string; held?: RbdHeldLock[] };

/** Options of {@link RbdStartGuard}. */
export interface RbdStartGuardOptions {
  /** Deadline of one FlushLocks call, ms (default 30 000). */
  deadlineMs?: number;
  /** Consecutive failed flushes of one VM before it is set to `fail` (default 3). */
  maxFailures?: number;
}

/** The failedreason of a start refused because other addresses hold locks on the VM's images. */
export function heldReason(held: readonly RbdHeldLock[]): string {
  const who = held.map((h) => `${h.image} held by ${h.locker} at ${h.address || '(no address)'} (lock "${h.lockId}")`).join('; ');
  return `Could not safely free RBD locks: ${who}, not this node; another node may be writing, so the start is refused. Stop the VM holding them, or remove the locks by hand once that node is certainly down`;
}

/**
 * Flushes a VM's RBD locks through cephd before vmd starts it. A lock held by another address fails
 * the VM at once, naming the holder (a live writer elsewhere must never be broken, so retrying
 * cannot help). Other failures (cephd unreachable, deadline passed, an image cephd could not
 * read or free) skip this start try and are counted per VM; after `maxFailures` in a row
 * the VM is failed with the reason. A success (or a VM with no RBD volumes) resets the count.
 */
export class RbdStartGuard {
  private readonly failures = new Map<string, number>();
  private readonly deadlineMs: number;
  private readonly maxFailures: number;

  constructor(private readonly locks: RbdLocks, opts: RbdStartGuardOptions = {}) {
    this.deadlineMs = opts.deadlineMs ?? 30_000;
    this.maxFailures = opts.maxFailures ?? 3;
  }

  /** Flushes the locks of `images` for VM `uuid`; never throws. */
  async beforeStart(uuid: string, images: readonly string[], signal?: AbortSignal): Promise<RbdGuardVerdict> {
    if (images.length === 0) {
      this.failures.delete(uuid);
      return { kind: 'go' };
    }
    const problem = await this.flush(images, signal);
    if (problem === undefined) {
      this.failures.delete(uuid);
      return { kind: 'go' };
    }
    if (typeof problem !== 'string') {
      this.failures.delete(uuid);
      return { kind: 'fail', reason: heldReason(problem), held: problem };
    }
    const attempt = (this.failures.get(uuid) ?? 0) + 1;
    if (attempt >= this.maxFailures) {
      this.failures.delete(uuid);
      return { kind: 'fail', reason: `Could not safely free RBD locks (${attempt} attempts): ${problem}` };
    }
    this.failures.set(uuid, attempt);
    return { kind: 'retry', reason: problem, attempt };
  }

  /** Forgets the count of a VM: its start is no longer wanted (the reconciler forgets it with the start queue's history). */
  forget(uuid: string): void {
    this.failures.delete(uuid);
  }

  /** Attempts allowed before `fail`. */
  get limit(): number {
    return this.maxFailures;
  }

  /** undefined = flushed; the foreign holders; or the reason of a failure worth retrying. */
  private async flush(images: readonly string[], signal?: AbortSignal): Promise<string | RbdHeldLock[] | undefined> {
    try {
      const r = await this.locks.flush(images, { deadlineMs: this.deadlineMs, signal });
      if (r.held.length > 0) return r.held;
      return r.failed.length > 0 ? `cephd could not free RBD locks: ${r.failed.join('; ')}` : undefined;
    } catch (err) {
      return `cephd FlushLocks failed: ${describeError(err)}`;
    }
  }
}
