import { describeError } from '@pvc/runtime';
import type { RbdLocks } from './rbd-locks.js';

/** Outcome of the lock flush before one start attempt. */
export type RbdGuardVerdict =
  | { kind: 'go' }
  /** Flush failed; the start is not attempted this pass and is retried on the next one. */
  | { kind: 'retry'; reason: string; attempt: number }
  /** Flush failed `maxFailures` times in a row: the VM goes to `fail` with `reason` as failedreason. */
  | { kind: 'fail'; reason: string };

/** Options of {@link RbdStartGuard}. */
export interface RbdStartGuardOptions {
  /** Deadline of one FlushLocks call, ms (default 30 000). */
  deadlineMs?: number;
  /** Consecutive failed flushes of one VM before it is set to `fail` (default 3). */
  maxFailures?: number;
}

/**
 * Flushes a VM's RBD locks through cephd before vmd starts it, and counts consecutive failures per
 * VM: a failed flush (cephd unreachable, deadline passed, or an image cephd could not free) skips
 * the start for this pass; after `maxFailures` in a row the VM is failed with the reason. A success
 * (or a VM with no RBD volumes) resets the count.
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
    const attempt = (this.failures.get(uuid) ?? 0) + 1;
    if (attempt >= this.maxFailures) {
      this.failures.delete(uuid);
      return { kind: 'fail', reason: `Could not safely free RBD locks (${attempt} attempts): ${problem}` };
    }
    this.failures.set(uuid, attempt);
    return { kind: 'retry', reason: problem, attempt };
  }

  /** Forgets the count of a VM (it was started some other way, or removed). */
  forget(uuid: string): void {
    this.failures.delete(uuid);
  }

  /** Attempts allowed before `fail`. */
  get limit(): number {
    return this.maxFailures;
  }

  private async flush(images: readonly string[], signal?: AbortSignal): Promise<string | undefined> {
    try {
      const r = await this.locks.flush(images, { deadlineMs: this.deadlineMs, signal });
      return r.failed.length > 0 ? `cephd could not free the locks of ${r.failed.join(', ')}` : undefined;
    } catch (err) {
      return `cephd FlushLocks failed: ${describeError(err)}`;
    }
  }
}
