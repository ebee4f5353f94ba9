/**
 * Calling plugin code under a deadline measured on the injected Clock. The plugin gets an
 * AbortSignal that fires at the deadline or at stop; a plugin that ignores it is abandoned (its
 * promise is tracked so it is not started again before it settles), never awaited past the deadline.
 *
 * @module
 */
import { TimeoutError } from '@pvc/runtime';
import type { Clock } from '@pvc/runtime';

/** How a bounded call ended. */
export type BoundedOutcome<T> =
  | { kind: 'ok'; value: T }
  | { kind: 'error'; error: unknown }
  /** The deadline passed; `settled` resolves when the abandoned call finally ends. */
  | { kind: 'timeout'; settled: Promise<void> }
  /** `stop` fired first. */
  | { kind: 'stopped'; settled: Promise<void> };

/**
 * Runs `fn(signal)` and resolves with its outcome within `timeoutMs` (virtual or real time) or as
 * soon as `stop` aborts, whichever comes first. Never rejects.
 */
export async function callBounded<T>(
  fn: (signal: AbortSignal) => Promise<T> | T,
  timeoutMs: number,
  clock: Clock,
  stop: AbortSignal,
): Promise<BoundedOutcome<T>> {
  const call = new AbortController();
  const timer = new AbortController();
  let onStop: () => void = () => undefined;
  const stopped = new Promise<'stopped'>((resolve) => {
    onStop = (): void => {
      call.abort(stop.reason);
      resolve('stopped');
    };
    if (stop.aborted) onStop();
    else stop.addEventListener('abort', onStop, { once: true });
  });
  const settledCall = Promise.resolve()
    .then(() => fn(call.signal))
    .then(
      (value): BoundedOutcome<T> => ({ kind: 'ok', value }),
      (error: unknown): BoundedOutcome<T> => ({ kind: 'error', error }),
    );
  const settled = settledCall.then(() => undefined);
  const deadline = clock.sleep(timeoutMs, timer.signal).then(
    (): BoundedOutcome<T> => ({ kind: 'timeout', settled }),
    (): BoundedOutcome<T> => ({ kind: 'stopped', settled }),
  );
  try {
    const first = await Promise.race([settledCall, deadline, stopped]);
    const outcome: BoundedOutcome<T> = first === 'stopped' ? { kind: 'stopped', settled } : first;
    if (outcome.kind === 'timeout') call.abort(new TimeoutError('plugin call', timeoutMs));
    return outcome;
  } finally {
    timer.abort();
    stop.removeEventListener('abort', onStop);
  }
}
