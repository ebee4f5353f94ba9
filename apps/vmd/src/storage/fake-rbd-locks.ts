import type { RbdFlushResult, RbdLocks } from './rbd-locks.js';

/**
 * In-memory {@link RbdLocks} for unit tests: records every call; `error` makes the next calls throw
 * (cephd unreachable), `failing` lists images cephd reports as not freed (another owner).
 */
export class FakeRbdLocks implements RbdLocks {
  readonly calls: string[][] = [];
  error: Error | undefined;
  failing = new Set<string>();
  closed = false;

  flush(images: readonly string[]): Promise<RbdFlushResult> {
    this.calls.push([...images]);
    if (this.error) return Promise.reject(this.error);
    return Promise.resolve({ flushed: images.filter((i) => !this.failing.has(i)), failed: images.filter((i) => this.failing.has(i)) });
  }

  close(): void {
    this.closed = true;
  }
}
