import { inspect } from 'node:util';
import { realClock } from '@pvc/runtime';

/** Options of {@link waitUntil}. */
export interface WaitUntilOptions<T> {
  /** What is awaited, for the timeout message ("the two primary-role log lines"). */
  what: string;
  /** Give up after this long (default 10 s). */
  timeoutMs?: number;
  /** Pause between two probes (default 50 ms). */
  intervalMs?: number;
  /** Done when this holds for a probed value (default: the value is truthy). */
  until?: (value: T) => boolean;
}

/**
 * Polls `probe` until its value satisfies `until` (default: truthy) and returns that value; a probe
 * that throws is retried. After `timeoutMs` it throws, naming what it waited for, the last value and
 * the last probe error. The rule of the integration and cluster tests: whatever a test checks that
 * another process (or an asynchronous writer) produces — a log line on a child's stdout, a file, a
 * ZK key — is waited for with a bound, never read once right after acting, never after a fixed sleep.
 * Keep the test's assertion after the wait: the wait says when, the assertion what.
 */
export async function waitUntil<T>(probe: () => T | Promise<T>, opts: WaitUntilOptions<T>): Promise<T> {
  const { what, timeoutMs = 10_000, intervalMs = 50 } = opts;
  const until = opts.until ?? ((v: T): boolean => Boolean(v));
  const deadline = realClock.now() + timeoutMs;
  let probed = false;
  let last: T | undefined;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await probe();
      probed = true;
      last = v;
      lastError = undefined;
      if (until(v)) return v;
    } catch (err) {
      lastError = err;
    }
    if (realClock.now() >= deadline) {
      const value = probed ? `; last value: ${inspect(last, { depth: 4, breakLength: Infinity, maxStringLength: 2000 })}` : '';
      const error = lastError === undefined ? '' : `; last error: ${lastError instanceof Error ? lastError.message : String(lastError)}`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${value}${error}`);
    }
    await realClock.sleep(intervalMs);
  }
}
