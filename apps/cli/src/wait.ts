import { refused, waitTimeout } from './errors.js';
import type { CliContext } from './context.js';

/** One look at a change in progress. */
export interface WaitStep {
  /** The change is complete. */
  done: boolean;
  /** The change failed: the reason (the command then exits 1). */
  failed?: string;
  /** What to show meanwhile, e.g. `vm1: migrate (hv1 → hv2)`. */
  progress?: string;
}

/** Default `--wait-timeout`, seconds. */
export const DEFAULT_WAIT_TIMEOUT_S = 300;

/** Parses `--wait-timeout`. */
export function parseWaitTimeout(raw: string | undefined): number {
  const s = Number(raw ?? DEFAULT_WAIT_TIMEOUT_S);
  if (!Number.isFinite(s) || s <= 0) throw refused(`--wait-timeout: expected a positive number of seconds, got "${raw ?? ''}"`);
  return s;
}

/**
 * Polls `check` every `pollMs` until it reports done (returns the last progress text) or failed
 * (throws, exit 1), or `timeoutS` passes (throws, exit 4). Progress goes to stderr.
 */
export async function waitUntil(
  ctx: CliContext,
  what: string,
  timeoutS: number,
  check: () => Promise<WaitStep>,
  pollMs = 250,
): Promise<string | undefined> {
  const { clock, signal } = ctx.io;
  const deadline = clock.now() + timeoutS * 1000;
  let last: string | undefined;
  for (;;) {
    const step = await check();
    if (step.progress !== undefined) {
      last = step.progress;
      ctx.output.progress(`${what}: ${step.progress}`);
    }
    if (step.failed !== undefined) {
      ctx.output.clearProgress();
      throw refused(`${what} failed: ${step.failed}`);
    }
    if (step.done) {
      ctx.output.clearProgress();
      return last;
    }
    if (clock.now() >= deadline) {
      ctx.output.clearProgress();
      throw waitTimeout(`${what}: not done after ${timeoutS} s${last ? ` (last seen: ${last})` : ''}`);
    }
    await clock.sleep(pollMs, signal);
  }
}
