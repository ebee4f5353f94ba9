import { AbortedError } from '@pvc/runtime';
import type { Clock } from '@pvc/runtime';
import { ZkError } from '../errors.js';

/**
 * Runs `run` under a deadline and an abort signal. On timeout it rejects with OPERATION_TIMEOUT, on
 * abort with {@link AbortedError}. The underlying request is not recalled: a timed-out write may
 * still be applied by the server later (as with any remote call).
 * A non-finite `timeoutMs` means no deadline.
 */
export function withDeadline<T>(
  what: string,
  clock: Clock,
  run: () => Promise<T>,
  opts: { timeoutMs: number; signal?: AbortSignal | undefined },
): Promise<T> {
  const { signal, timeoutMs } = opts;
  if (signal?.aborted) return Promise.reject(new AbortedError(what, signal.reason));
  return new Promise<T>((resolve, reject) => {
    const timer = new AbortController();
    let settled = false;
    const finish = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      timer.abort();
      signal?.removeEventListener('abort', onAbort);
      fn();
    };
    const onAbort = (): void => finish(() => reject(new AbortedError(what, signal?.reason)));
    signal?.addEventListener('abort', onAbort, { once: true });
    if (Number.isFinite(timeoutMs)) {
      clock.sleep(Math.max(0, timeoutMs), timer.signal).then(
        () => finish(() => reject(new ZkError('OPERATION_TIMEOUT', `${what} timed out after ${timeoutMs} ms`))),
        () => undefined,
      );
    }
    let p: Promise<T>;
    try {
      p = run();
    } catch (err) {
      finish(() => reject(err));
      return;
    }
    p.then(
      (v) => finish(() => resolve(v)),
      (e: unknown) => finish(() => reject(e)),
    );
  });
}

/** A signal that aborts when any of the given signals aborts (undefined entries are ignored). */
export function anySignal(...signals: (AbortSignal | undefined)[]): AbortSignal | undefined {
  const present = signals.filter((s): s is AbortSignal => s !== undefined);
  if (present.length === 0) return undefined;
  if (present.length === 1) return present[0];
  return AbortSignal.any(present);
}
