import type { RbdHeldLock } from '@pvc/rpc';
import type { RbdFlushResult, RbdLocks } from './rbd-locks.js';

/**
 * In-memory {@link RbdLocks} for unit tests: records every call; `error` makes the next calls throw
 * (cephd unreachable), `failing` lists images cephd reports as not freed (a transient failure),
 * `heldBy` images another node holds (locker and address).
 */
export class FakeRbdLocks implements RbdLocks {
  readonly calls: string[][] = [];
  error: Error | undefined;
  failing = new Set<string>();
  heldBy = new Map<string, { locker: string; address: string }>();
  closed = false;

  flush(images: readonly string[]): Promise<RbdFlushResult> {
    this.calls.push([...images]);
    if (this.error) return Promise.reject(this.error);
    const held: RbdHeldLock[] = images.flatMap((image) => {
      const h = this.heldBy.get(image);
      return h ? [{ image, lockId: 'auto 1', ...h }] : [];
    });
    const bad = (i: string): boolean => this.failing.has(i) || this.heldBy.has(i);
    return Promise.resolve({
      flushed: images.filter((i) => !bad(i)),
      failed: images.filter(bad).map((i) => (this.heldBy.has(i) ? `${i}: locked by another node` : `${i}: rbd lock list failed: timed out`)),
      held,
    });
  }

  close(): void {
    this.closed = true;
  }
}
