/**
 * Small rules shared by fence recovery, the recovery retry and the fault table (pure, no I/O).
 *
 * @module
 */

/**
 * Start of the `failedreason` recovery writes for a VM it could not place. The retry
 * (`retry.ts`) only picks up VMs carrying it, and the fault table raises `VM_NO_TARGET_<NAME>`
 * for them, so the text is part of the contract: do not reword it.
 */
export const NO_TARGET_PREFIX = 'Recovery from fenced node ';

/** The `failedreason` of a VM recovery from `dead` could not place: `…: no target (<why>)`. */
export function noTargetReason(dead: string, why: string): string {
  return `${NO_TARGET_PREFIX}${dead}: no target (${why})`;
}

/** Whether a `failedreason` was written by recovery for a VM it could not place. */
export function isNoTargetReason(failedReason: string): boolean {
  return failedReason.startsWith(NO_TARGET_PREFIX);
}

/** How often the suicide watch looks at the keepalive's age: min(interval, 1 s). */
export function suicideStepMs(intervalMs: number): number {
  return Math.min(intervalMs, 1_000);
}

/** Bound of one suicide peer check (every coordinator asked at once): min(interval, 2 s). */
export function peerAskBoundMs(intervalMs: number): number {
  return Math.min(intervalMs, 2_000);
}

/**
 * The most the suicide peer check can delay a cut-off node's reset, beyond what `resetWaitMs`
 * already allows for: `suicide_intervals × interval + interval + 3 × (check step + ask bound)`.
 * After a global outage the node notices quorum back at its next re-check (≤ interval + step +
 * ask), then waits a fresh suicide window for its own keepalive before asking once more (≤ window
 * + step + ask); a fencer reconnects after the outage at most one ask before the verdict that held
 * the node back. The window and one more step + ask also cover one wrong "global" verdict (the
 * answers are not simultaneous: a quorum that changed members while we asked). docs/keepaliled.md
 * ("Suicide") has the whole argument.
 */
export function peerCheckDelayMs(intervalMs: number, suicideIntervals: number): number {
  return suicideIntervals * intervalMs + intervalMs + 3 * (suicideStepMs(intervalMs) + peerAskBoundMs(intervalMs));
}

/**
 * After a failed fence, how long a node must have been silent before it has certainly reset
 * itself and stopped its VMs: `suicide_intervals × interval` plus a margin (`max(interval, 5 s)`)
 * for its own VM stop and reset, plus {@link peerCheckDelayMs} when the suicide peer check is on
 * (`peer_check_port` ≠ 0; like `suicide_intervals`, taken from our own config: configs are assumed
 * uniform). Undefined when suicide is off (the node may still run its VMs). "Silent" is as the
 * fencer observed: its sightings restart when its own ZK connection comes back.
 */
export function resetWaitMs(intervalMs: number, suicideIntervals: number, opts: { peerCheck?: boolean } = {}): number | undefined {
  if (suicideIntervals <= 0) return undefined;
  const base = suicideIntervals * intervalMs + Math.max(intervalMs, 5_000);
  return opts.peerCheck ? base + peerCheckDelayMs(intervalMs, suicideIntervals) : base;
}
