/**
 * A bounded retry on the injected Clock: at most `maxAttempts`, spaced by a doubling delay, the
 * whole of it (attempts and delays) inside `totalMs`. @pvc/runtime has no retry helper yet; this
 * one is generic (nothing keepaliled-specific) so that it can move there as is.
 *
 * @module
 */
import { TimeoutError, type Clock } from '@pvc/runtime';

/** How a bounded retry spaces and limits its attempts. */
export interface RetryBounds {
  /** At most this many attempts (at least one is always made). */
  readonly maxAttempts: number;
  /** Delay after the first failed attempt; doubles after each further one, up to `maxDelayMs`. */
  readonly firstDelayMs: number;
  readonly maxDelayMs: number;
  /** One attempt's own deadline; an attempt never gets more than what is left of `totalMs`. */
  readonly attemptMs: number;
  /** Everything, from the first attempt's start to the verdict, ends within this. */
  readonly totalMs: number;
}

/** What an attempt gets: its deadline (ms, for the call it makes) and a signal cut at that deadline. */
export interface AttemptContext {
  readonly attempt: number;
  readonly deadlineMs: number;
  readonly signal: AbortSignal;
}

/** One failed attempt, reported before any delay. `retryInMs` is set only when another attempt will follow. */
export interface AttemptFailure {
  readonly attempt: number;
  readonly error: unknown;
  readonly retryInMs: number | undefined;
}

/** The verdict: the value of the attempt that succeeded, or the last error. */
export type RetryOutcome<T> =
  | { readonly ok: true; readonly value: T; readonly attempts: number; readonly elapsedMs: number }
  | {
      readonly ok: false;
      readonly error: unknown;
      readonly attempts: number;
      readonly elapsedMs: number;
      /** The caller's signal ended it (not the bounds). */
      readonly aborted: boolean;
    };

/** Options of {@link retryBounded}. */
export interface RetryOptions {
  /** Ends the retry early (a delay or the attempt in flight is cut). */
  readonly signal?: AbortSignal;
  /** An error for which another attempt cannot help ends the retry at once. */
  readonly terminal?: (err: unknown) => boolean;
  /** Called once per failed attempt (log it here: `retryInMs` says whether a retry follows). */
  readonly onFailure?: (f: AttemptFailure) => void;
}

/** The delay after failed attempt `n` (1-based). */
export function retryDelayMs(b: RetryBounds, n: number): number {
  return Math.min(b.maxDelayMs, b.firstDelayMs * 2 ** Math.min(Math.max(0, n - 1), 30));
}

/**
 * Runs `attempt` until it resolves, an error is terminal, the attempts are used up, the next delay
 * would pass `totalMs`, or `signal` aborts. Never rejects. The bound holds even against an attempt
 * that ignores its deadline: it is abandoned (its signal aborted) when the time is up.
 */
export async function retryBounded<T>(
  clock: Clock,
  bounds: RetryBounds,
  attempt: (ctx: AttemptContext) => Promise<T>,
  opts: RetryOptions = {},
): Promise<RetryOutcome<T>> {
  const start = clock.now();
  const end = start + bounds.totalMs;
  const elapsed = (): number => clock.now() - start;
  for (let n = 1; ; n++) {
    try {
      const value = await cutAt(clock, Math.min(bounds.attemptMs, end - clock.now()), n, attempt, opts.signal);
      return { ok: true, value, attempts: n, elapsedMs: elapsed() };
    } catch (error) {
      const aborted = opts.signal?.aborted === true;
      const delay = retryDelayMs(bounds, n);
      const again = !aborted && n < bounds.maxAttempts && opts.terminal?.(error) !== true && clock.now() + delay < end;
      opts.onFailure?.({ attempt: n, error, retryInMs: again ? delay : undefined });
      if (!again) return { ok: false, error, attempts: n, elapsedMs: elapsed(), aborted };
      const slept = await clock.sleep(delay, opts.signal).then(() => true, () => false);
      if (!slept) return { ok: false, error, attempts: n, elapsedMs: elapsed(), aborted: true };
    }
  }
}

/**
 * One attempt, abandoned with a {@link TimeoutError} (its signal aborted) once `ms` have passed, or
 * with the sleep's AbortedError when `outer` aborts, whether or not the attempt heeds its signal.
 */
async function cutAt<T>(
  clock: Clock,
  ms: number,
  n: number,
  attempt: (ctx: AttemptContext) => Promise<T>,
  outer: AbortSignal | undefined,
): Promise<T> {
  const cut = new AbortController();
  const signal = outer ? AbortSignal.any([outer, cut.signal]) : cut.signal;
  const timeUp = clock.sleep(ms, signal).then(
    () => {
      const err = new TimeoutError(`attempt ${n}`, ms);
      cut.abort(err);
      throw err;
    },
    (err: unknown) => {
      if (outer?.aborted) throw err;
      return new Promise<never>(() => undefined);
    },
  );
  const run = attempt({ attempt: n, deadlineMs: ms, signal });
  try {
    return await Promise.race([run, timeUp]);
  } finally {
    cut.abort();
    run.catch(() => undefined);
  }
}
