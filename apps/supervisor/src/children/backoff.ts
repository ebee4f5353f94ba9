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

/** `system.fencing.intervals`: what the fence detection window is made of. */
export interface FenceIntervals {
  /** Seconds between keepalives (≥ 1). */
  readonly keepalive_interval: number;
  /** Missed keepalives before a node is fenced; 0 = fencing off. */
  readonly fence_intervals: number;
}

/**
 * The restart-delay cap on a fencing node: half the fence detection window
 * (`keepalive_interval × fence_intervals / 2`, ms), or undefined when fencing is off
 * (`fence_intervals` 0).
 */
export function fenceSafeDelayCap(f: FenceIntervals): number | undefined {
  if (f.fence_intervals <= 0) return undefined;
  return (f.keepalive_interval * f.fence_intervals * 1000) / 2;
}

/**
 * The policy every child runs under on this node. Safety invariant: a restart delay never exceeds
 * half the fence detection window, so a keepaliled that crashes repeatedly is back (and writing
 * keepalives) before the other coordinators could declare this healthy node dead. The same cap
 * applies to netd, vmd and cephd whenever it is lower than their normal one (they feed
 * keepaliled's figures). Fencing off: the normal policy, unchanged. Crash-loop detection and the
 * stable-run reset are unchanged.
 */
export function restartPolicyFor(base: RestartPolicy, f: FenceIntervals): RestartPolicy {
  const cap = fenceSafeDelayCap(f);
  if (cap === undefined || cap >= base.maxDelayMs) return base;
  return Object.freeze({ ...base, maxDelayMs: cap, initialDelayMs: Math.min(base.initialDelayMs, cap) });
}

/** Delay before restart number `consecutive` (1-based) of a crashing child. */
export function restartDelay(policy: RestartPolicy, consecutive: number): number {
  const n = Math.max(1, consecutive);
  return Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** Math.min(n - 1, 30));
}

/** Crash times (ms) still inside the crash-loop window at `now`. */
export function recentCrashes(policy: RestartPolicy, crashes: readonly number[], now: number): number[] {
  return crashes.filter((t) => now - t < policy.crashLoopWindowMs);
}
