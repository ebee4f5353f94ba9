/** Restart policy of a child service (standalone mode). */
export interface RestartPolicy {
  /** First restart delay, ms (doubles per consecutive crash). */
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
  /** A child that ran this long before crashing counts as stable: the delay starts over. */
  readonly stableAfterMs: number;
  /** This many crashes within {@link RestartPolicy.crashLoopWindowMs} is a crash loop. */
  readonly crashLoopCount: number;
  readonly crashLoopWindowMs: number;
  /** How long a child gets after SIGTERM before SIGKILL. */
  readonly stopTimeoutMs: number;
}

/** 0.5 s doubling to 30 s, reset after a minute of stable running; 5 crashes in 60 s is a loop. */
export const DEFAULT_RESTART_POLICY: RestartPolicy = Object.freeze({
  initialDelayMs: 500,
  maxDelayMs: 30_000,
  stableAfterMs: 60_000,
  crashLoopCount: 5,
  crashLoopWindowMs: 60_000,
  stopTimeoutMs: 15_000,
});

/** Delay before restart number `consecutive` (1-based) of a crashing child. */
export function restartDelay(policy: RestartPolicy, consecutive: number): number {
  const n = Math.max(1, consecutive);
  return Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** Math.min(n - 1, 30));
}

/** Crash times (ms) still inside the crash-loop window at `now`. */
export function recentCrashes(policy: RestartPolicy, crashes: readonly number[], now: number): number[] {
  return crashes.filter((t) => now - t < policy.crashLoopWindowMs);
}
