/**
 * The fault pass of the primary coordinator: every interval, while this node holds the primary
 * duties, read the cluster facts, evaluate the fault conditions and store them under `/faults`.
 *
 * Safety and liveness contracts:
 * - Runs in its own loop, never on the keepalive path; each pass is bounded (default: one
 *   interval) on the injected Clock and abandoned at its deadline; a new pass does not start
 *   while an abandoned one has not settled. A failure is logged once per episode and the next
 *   pass tries again.
 * - Writes only while `isPrimary()` holds (asked again before every write), so after a
 *   relinquish at most the write in flight lands.
 * - Writes nothing while `/config/maintenance` is on (strtobool).
 *
 * @module
 */
import type { Clock, Logger } from '@pvc/runtime';
import { AbortedError, describeError } from '@pvc/runtime';
import { clusterHealth, clusterKeys, readKey, type ZkClient } from '@pvc/zk';
import { callBounded } from '../health/bounded.js';
import { evaluateFaults, type FaultCondition } from './conditions.js';
import { readClusterFacts } from './facts.js';
import { applyFaultWrites, planFaultWrites, readStoredFaults, type FaultWriteOutcome, type StoredFault } from './writer.js';

/** Dependencies of the {@link FaultReporter}. */
export interface FaultReporterDeps {
  zk: ZkClient;
  clock: Clock;
  logger: Logger;
  /** Pass period (keepaliled uses `keepalive_interval`). */
  intervalMs: number;
  /** Whether this node holds the primary duties now. */
  isPrimary: () => boolean;
  /** Bound of one pass; default {@link intervalMs}. */
  passDeadlineMs?: number;
}

/** How a pass ended. */
export type PassOutcome = 'written' | 'not-primary' | 'not-connected' | 'maintenance' | 'no-faults-root' | 'failed' | 'timeout' | 'busy' | 'stopped';

/** What one pass did (for logs and tests). */
export interface PassReport {
  outcome: PassOutcome;
  active: FaultCondition[];
  writes: FaultWriteOutcome[];
  /** Cluster health after the writes (the API's rule), when the pass got that far. */
  health?: number;
  error?: string;
}

const EMPTY = { active: [], writes: [] };

/** Evaluates and stores the cluster faults on the primary coordinator (see module doc). */
export class FaultReporter {
  private abandoned: Promise<void> | undefined;
  private inMaintenance = false;
  private noRoot = false;
  private failing = false;
  private lastHealth: number | undefined;

  constructor(private readonly deps: FaultReporterDeps) {}

  /** Runs a pass every interval (the first at once) until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const { clock, intervalMs } = this.deps;
    let due = clock.now();
    while (!signal.aborted) {
      if (this.deps.isPrimary()) await this.pass(signal);
      due += intervalMs;
      const now = clock.now();
      if (due < now) due += Math.ceil((now - due) / intervalMs) * intervalMs;
      await clock.sleep(due - now, signal).catch((err: unknown) => {
        if (!(err instanceof AbortedError)) throw err;
      });
    }
  }

  /** One bounded pass. Never rejects. */
  async pass(stop: AbortSignal): Promise<PassReport> {
    const { zk, clock, logger } = this.deps;
    if (!this.deps.isPrimary()) return { outcome: 'not-primary', ...EMPTY };
    if (zk.state !== 'connected') return { outcome: 'not-connected', ...EMPTY };
    if (this.abandoned) {
      logger.debug('the abandoned fault pass has not settled yet; this one is skipped');
      return { outcome: 'busy', ...EMPTY };
    }
    const deadlineMs = this.deps.passDeadlineMs ?? this.deps.intervalMs;
    const r = await callBounded((signal) => this.passOnce(signal), deadlineMs, clock, stop);
    if (r.kind === 'ok') return this.succeeded(r.value);
    if (r.kind === 'error') return this.failed(describeError(r.error));
    if (r.kind === 'timeout') {
      this.abandoned = r.settled.finally(() => (this.abandoned = undefined));
      return this.failed(`the pass did not finish within ${deadlineMs} ms; abandoned`, 'timeout');
    }
    return { outcome: 'stopped', ...EMPTY };
  }

  private async passOnce(signal: AbortSignal): Promise<PassReport> {
    const { zk, clock } = this.deps;
    const logger = this.deps.logger;
    const opts = { signal, logger };
    if (await readKey(zk, clusterKeys.maintenance, opts)) {
      this.note('inMaintenance', true, 'maintenance is on: no faults are written');
      return { outcome: 'maintenance', ...EMPTY };
    }
    this.note('inMaintenance', false, 'maintenance is off: faults are written again');
    const stored = await readStoredFaults(zk, opts);
    if (stored === undefined) {
      this.note('noRoot', true, '/faults does not exist (schema not applied?): no faults are written');
      return { outcome: 'no-faults-root', ...EMPTY };
    }
    this.note('noRoot', false, '/faults exists again: faults are written');
    const active = evaluateFaults(await readClusterFacts(zk, opts));
    const writes = planFaultWrites(active, new Set(stored.map((f) => f.id)), clock.now());
    const outcomes = await applyFaultWrites(zk, writes, this.deps.isPrimary, opts);
    return { outcome: 'written', active, writes: outcomes, health: healthAfter(stored, active, outcomes) };
  }

  private succeeded(report: PassReport): PassReport {
    if (this.failing) this.deps.logger.info('fault passes work again');
    this.failing = false;
    if (report.health !== undefined && report.health !== this.lastHealth) {
      this.deps.logger.info({ health: report.health, active: report.active.map((f) => f.id) }, 'cluster health');
      this.lastHealth = report.health;
    }
    return report;
  }

  private failed(error: string, outcome: PassOutcome = 'failed'): PassReport {
    // Once per episode at warn: a ZK outage must not fill the log every interval.
    if (this.failing) this.deps.logger.debug({ err: error }, 'fault pass failed again');
    else this.deps.logger.warn({ err: error }, 'fault pass failed; retrying every interval');
    this.failing = true;
    return { outcome, ...EMPTY, error };
  }

  /** Logs a change of one of the pass's standing conditions, once. */
  private note(flag: 'inMaintenance' | 'noRoot', on: boolean, msg: string): void {
    if (this[flag] === on) return;
    this[flag] = on;
    if (on && flag === 'noRoot') this.deps.logger.warn(msg);
    else this.deps.logger.info(msg);
  }
}

/**
 * The stored faults as this pass left them: written faults carry their new delta (a created one
 * status `new`); the rest as read. Then the API's health rule.
 */
export function healthAfter(stored: readonly StoredFault[], active: readonly FaultCondition[], outcomes: readonly FaultWriteOutcome[]): number {
  const byId = new Map(stored.map((f) => [f.id, { status: f.status as string, delta: f.delta }]));
  const written = new Map(outcomes.map((o) => [o.id, o.result]));
  for (const f of active) {
    const result = written.get(f.id);
    if (result !== 'created' && result !== 'updated') continue;
    byId.set(f.id, { status: byId.get(f.id)?.status ?? 'new', delta: f.delta });
  }
  return clusterHealth([...byId.values()]);
}
