/**
 * Switching this node's primary duties off (netd, then cephd, through the Peers port) with a
 * bounded retry, and what a failure means for the router state. The handover rule — the new
 * primary's duties start only after the old one's have stopped — rests on the old primary's
 * routerstate, so `secondary` is written only when the services confirmed, or when the service
 * that failed is not running at all (it runs no duty); otherwise the node stays `relinquish`.
 *
 * @module
 */
import { describeError, PvcError, type Clock, type Logger } from '@pvc/runtime';
import type { Peers } from '../ports.js';
import { retryBounded, type RetryBounds } from './bounded-retry.js';

/**
 * Bounds of one switch-off: 4 attempts, 0.5 / 1 / 2 s apart, each cut at 5 s, all within 8 s.
 * The step-down at shutdown runs this and then two ZK writes, and must end before the supervisor's
 * SIGKILL (`stopTimeoutMs`, 15 s after SIGTERM) or the exit of a service whose supervisor died
 * (`SUPERVISOR_GONE_EXIT_MS`, 15 s).
 */
export const DUTIES_OFF_BOUNDS: RetryBounds = Object.freeze({
  maxAttempts: 4,
  firstDelayMs: 500,
  maxDelayMs: 2_000,
  attemptMs: 5_000,
  totalMs: 8_000,
});

/** Pause before the election loop tries again to stop duties that were not confirmed stopped. */
export const UNCONFIRMED_RETRY_PAUSE_MS = 5_000;

/** Who the failure is about when the error does not say (the port asks netd, then cephd). */
const EITHER_SERVICE = 'netd or cephd';

/**
 * Why the last attempt failed:
 * - `not-running`: the service's socket is missing (ENOENT: stopped, or never started; a service
 *   removes its socket only after its own shutdown dropped its duties) or refused (ECONNREFUSED: a
 *   stale socket, the process died);
 * - `stop-failed`: the service answered that a duty did not stop (it left the role anyway, so
 *   asking again would be answered "done" without stopping anything: terminal);
 * - `unanswered`: anything else — a deadline, a broken connection, an unknown error: the service
 *   may be alive and still running the duties.
 */
export interface DutyFailure {
  readonly kind: 'not-running' | 'stop-failed' | 'unanswered';
  /** The service named by the error (its socket, or its own message), else `netd or cephd`. */
  readonly service: string;
  /** The part of the error that says what happened. */
  readonly detail: string;
}

/** What switching the duties off came to. */
export type DutiesOffResult =
  | { readonly kind: 'stopped'; readonly attempts: number }
  | ({ readonly attempts: number; readonly elapsedMs: number } & DutyFailure)
  | { readonly kind: 'aborted' };

/** The router state to be in after a switch-off that ended (not aborted), and why. */
export interface DutiesOffVerdict {
  readonly router: 'secondary' | 'relinquish';
  readonly reason: string;
}

/** An unconfirmed switch-off ends the election pass; the loop tries again after a pause. */
export class DutiesNotConfirmedError extends PvcError {
  constructor(reason: string) {
    super('PRIMARY_DUTIES_NOT_CONFIRMED_STOPPED', reason, { retryable: true });
  }
}

/** Reads a failed `setPrimaryDuties(false)` (see {@link DutyFailure}). */
export function classifyDutyFailure(err: unknown): DutyFailure {
  const message = describeError(err);
  const code = err instanceof PvcError ? err.code : undefined;
  const socket = /\/([\w-]+)\.sock\b/.exec(message)?.[1];
  if (code === 'DUTY_STOP_FAILED') {
    const own = /([\w-]+): primary dut(?:y|ies)\b/.exec(message)?.[1];
    return { kind: 'stop-failed', service: own ?? socket ?? EITHER_SERVICE, detail: message };
  }
  const connect = /connect (ENOENT|ECONNREFUSED) (\S+)/.exec(message);
  if (connect && (code === undefined || code === 'RPC_UNAVAILABLE')) {
    const detail = `connect ${connect[1]} ${connect[2]?.replace(/[.,;]+$/, '')}`;
    return { kind: 'not-running', service: socket ?? EITHER_SERVICE, detail };
  }
  return { kind: 'unanswered', service: socket ?? EITHER_SERVICE, detail: message };
}

/** The router state after a switch-off, with a reason that says what happened. */
export function dutiesOffVerdict(r: Exclude<DutiesOffResult, { kind: 'aborted' }>): DutiesOffVerdict {
  switch (r.kind) {
    case 'stopped':
      return { router: 'secondary', reason: 'duties stopped' };
    case 'not-running':
      return { router: 'secondary', reason: `duties not confirmed stopped: ${r.service} unreachable (${r.detail}); it is not running` };
    case 'stop-failed':
      return { router: 'secondary', reason: `duties not confirmed stopped: ${r.detail}` };
    case 'unanswered':
      return { router: 'relinquish', reason: `duties not confirmed stopped: ${r.service} did not answer (${r.detail})` };
  }
}

/** Dependencies of {@link switchDutiesOff}. */
export interface DutiesOffDeps {
  peers: Peers;
  clock: Clock;
  logger: Logger;
  bounds?: RetryBounds;
}

const CONSEQUENCE: Record<DutyFailure['kind'], string> = {
  'not-running': 'secondary: a service that is not running runs no duty',
  'stop-failed': 'secondary: the service has left the primary role; the duty named needs an operator',
  unanswered: 'staying relinquish: no other coordinator starts the duties until they are confirmed stopped (or this node is stopped, fenced or dead)',
};

/**
 * Switches the duties off within {@link DUTIES_OFF_BOUNDS}. Logs each failed attempt that will be
 * retried (with the delay), and once, as an error, a failure that ends it (naming the service and
 * the state that follows). `signal` (shutdown) cuts it short: `aborted`, nothing logged.
 */
export async function switchDutiesOff(deps: DutiesOffDeps, reason: string, signal?: AbortSignal): Promise<DutiesOffResult> {
  const { peers, clock, logger } = deps;
  const out = await retryBounded(clock, deps.bounds ?? DUTIES_OFF_BOUNDS, (a) => peers.setPrimaryDuties(false, reason, { deadlineMs: a.deadlineMs, signal: a.signal }), {
    signal,
    terminal: (err) => classifyDutyFailure(err).kind === 'stop-failed',
    onFailure: (f) => {
      if (f.retryInMs === undefined) return;
      const { service, detail } = classifyDutyFailure(f.error);
      logger.warn({ service, err: detail, attempt: f.attempt, retryInMs: f.retryInMs }, `could not stop the primary duties; retrying in ${f.retryInMs} ms`);
    },
  });
  if (out.ok) return { kind: 'stopped', attempts: out.attempts };
  if (out.aborted) return { kind: 'aborted' };
  const failure = classifyDutyFailure(out.error);
  logger.error(
    { service: failure.service, verdict: failure.kind, err: failure.detail, attempts: out.attempts, elapsedMs: out.elapsedMs },
    `primary duties could not be confirmed stopped (${failure.service}); ${CONSEQUENCE[failure.kind]}`,
  );
  return { ...failure, attempts: out.attempts, elapsedMs: out.elapsedMs };
}
