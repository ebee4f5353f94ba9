import type { Clock } from './clock.js';

/**
 * Maps `items` through `fn` with at most `limit` calls in flight (at least one); results in input
 * order. The first rejection rejects the whole (calls already started run to their end). For
 * bounded fan-out of ZK reads and writes over many nodes or VMs.
 */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker));
  return out;
}

/**
 * `p`, or a rejection `no answer within <ms> ms` once `ms` passed on `clock` — enforced on our side
 * even if the callee ignores its own deadline (`p` keeps running; its outcome is dropped).
 */
export async function withinDeadline<T>(clock: Clock, p: Promise<T>, ms: number): Promise<T> {
  const timer = new AbortController();
  const late = clock.sleep(ms, timer.signal).then(
    () => Promise.reject(new Error(`no answer within ${ms} ms`)),
    () => new Promise<never>(() => undefined),
  );
  try {
    return await Promise.race([p, late]);
  } finally {
    timer.abort();
  }
}

/** A fixed pause between attempts, or one that doubles from `firstMs` up to `maxMs`. */
export type RetryPause = number | { readonly firstMs: number; readonly maxMs: number };

/**
 * Runs `attempt` at once and then again after a pause (`every`: fixed, or doubling up to a bound)
 * after each attempt that returned false, until one returns true or `signal` aborts. Never
 * rejects: `attempt` reports its own failures (and returns false); an abort ends the wait. The one
 * "retry until done" loop for services' start-up chores.
 */
export async function retryUntilDone(clock: Clock, every: RetryPause, attempt: () => Promise<boolean>, signal: AbortSignal): Promise<void> {
  let pause = typeof every === 'number' ? every : every.firstMs;
  while (!signal.aborted && !(await attempt())) {
    await clock.sleep(pause, signal).catch(() => undefined);
    if (typeof every !== 'number') pause = Math.min(pause * 2, every.maxMs);
  }
}
