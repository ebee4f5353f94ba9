import { setMaxListeners } from 'node:events';

/**
 * The one cancellation story: a root AbortController aborted on SIGTERM/SIGINT (and SIGQUIT).
 * Its signal is handed to loops, Clock sleeps, Exec and gRPC calls.
 */
export interface Shutdown {
  readonly signal: AbortSignal;
  /** Resolves with the reason once shutdown has been requested. */
  readonly requested: Promise<string>;
  /** Requests shutdown programmatically. */
  trigger(reason: string): void;
}

/** Creates the root shutdown signal; with `installHandlers`, POSIX signals trigger it. */
export function createShutdown(installHandlers = true): Shutdown {
  const controller = new AbortController();
  // Every loop, sleep, lock wait and call of the service listens on it, many at once (starts,
  // fences, watches): not a leak, so no MaxListenersExceededWarning in the journal.
  setMaxListeners(0, controller.signal);
  let resolveRequested: (reason: string) => void = () => undefined;
  const requested = new Promise<string>((r) => (resolveRequested = r));
  const trigger = (reason: string): void => {
    if (controller.signal.aborted) return;
    controller.abort(new Error(reason));
    resolveRequested(reason);
  };
  if (installHandlers) {
    // `on`, not `once`: while a child runs, execa's signal-exit hook re-raises a signal it thinks
    // nobody else handles, which would kill us mid-shutdown. A repeated signal is a no-op.
    for (const sig of ['SIGTERM', 'SIGINT', 'SIGQUIT'] as const) {
      process.on(sig, () => trigger(sig));
    }
  }
  return { signal: controller.signal, requested, trigger };
}

/** Resolves once `signal` aborts (at once if it already has): the wait of a service's `run` whose work is event-driven. */
export function untilAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}
