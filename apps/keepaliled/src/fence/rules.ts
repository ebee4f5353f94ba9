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

/**
 * After a failed fence, how long a node must have been silent before it has certainly reset
 * itself and stopped its VMs: `suicide_intervals × interval` plus a margin (`max(interval, 5 s)`)
 * for its own VM stop and reset. Undefined when suicide is off (the node may still run its VMs).
 */
export function resetWaitMs(intervalMs: number, suicideIntervals: number): number | undefined {
  if (suicideIntervals <= 0) return undefined;
  return suicideIntervals * intervalMs + Math.max(intervalMs, 5_000);
}
