import type { Clock } from '@pvc/runtime';
import { withDeadline } from '../core/deadline.js';

/**
 * Records what a watcher delivers and lets a test wait until the LATEST delivery satisfies a
 * predicate (level-based: intermediate values may be skipped or repeated, the last one counts).
 */
export class ValueRecorder<T> {
  readonly values: T[] = [];
  private readonly waiters = new Set<() => void>();

  constructor(private readonly clock: Clock) {}

  /** The watcher callback to pass to `watchData` / `watchChildren`. */
  readonly fn = (v: T): void => {
    this.values.push(v);
    for (const w of [...this.waiters]) w();
  };

  /** The last delivered value, or undefined before the first delivery. */
  latest(): T | undefined {
    return this.values[this.values.length - 1];
  }

  /** Resolves with the latest value once it satisfies `pred` (checked now and on each delivery). */
  waitFor(pred: (v: T) => boolean, what = 'a matching watch delivery', timeoutMs = 5000): Promise<T> {
    let check: () => void = () => undefined;
    const p = new Promise<T>((resolve) => {
      check = (): void => {
        const n = this.values.length;
        const last = this.values[n - 1] as T;
        if (n > 0 && pred(last)) resolve(last);
      };
      this.waiters.add(check);
      check();
    });
    return withDeadline(`waiting for ${what} (got ${JSON.stringify(this.values.slice(-3), bigints)})`, this.clock, () => p, {
      timeoutMs,
    }).finally(() => this.waiters.delete(check));
  }
}

function bigints(_k: string, v: unknown): unknown {
  return typeof v === 'bigint' ? v.toString() : v;
}
