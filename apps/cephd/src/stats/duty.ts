/**
 * The primary duty "ceph-stats": while this node is primary, a storage stats pass ({@link statsPass})
 * at takeover and then every keepalive interval, at least 5 s apart ({@link statsPeriodMs}; the
 * original's primary keepalive Ceph thread).
 *
 * Contract:
 * - Bounded: a pass is bounded by the Ceph command deadline plus the Zookeeper deadlines; a pass
 *   still running when the next is due makes that one skipped (never two at once), logged once per
 *   run of skips. Nothing else waits for a pass: keepaliled's keepalive does not ask cephd for it,
 *   and GetStorageStats reads only Zookeeper.
 * - Staleness: what a pass could not refresh keeps its last value in the original's keys (never an
 *   invented one) and is named in our `/ceph/stats_state`, written after every pass. A part turning
 *   stale is logged once (warn, with why); all parts current again is logged once (info).
 * - `stop` (relinquish, shutdown) stops the timer, aborts the running pass (its Ceph commands are
 *   killed; it writes nothing more) and waits for it.
 */
import { describeError, type Clock, type Logger } from '@pvc/runtime';
import type { PrimaryDuty } from '@pvc/rpc';
import { cephKeys, pair, type CephStatsState } from '@pvc/zk';
import { statsPass, type PassReport, type StatsPassDeps } from './pass.js';

/** Dependencies of {@link CephStatsDuty}. */
export interface CephStatsDeps extends StatsPassDeps {
  node: string;
  clock: Clock;
  logger: Logger;
  /** Time between passes, ms: {@link statsPeriodMs} of `keepalive_interval`. */
  intervalMs: number;
}

/**
 * How often a pass runs: every keepalive interval, but at least 5 s apart. A pass starts ~5 `ceph`
 * processes (Python; 0.25–0.5 CPU-s each here), so at the test cluster's 1-s keepalive it would
 * take most of two cores and, under that load, never finish within its deadline (seen on the
 * 3-host cluster: every command timed out at 1 s and the stats stayed empty). The original's
 * librados thread was cheap enough to run at any interval; ours is not (see docs/netd-cephd.md).
 */
export function statsPeriodMs(keepaliveIntervalMs: number): number {
  return Math.max(keepaliveIntervalMs, 5_000);
}

/**
 * Deadline of each Ceph command of a pass, from the pass period ({@link statsPeriodMs}): 3 s at
 * 5 s and more, never under 1 s. The original's librados calls have 1 s; ours start a `ceph` process (Python),
 * which needs 0.25–0.5 s of CPU before it even connects on these 2-core machines (measured with the
 * one-host Ceph: 250–470 ms a command idle, 0.8–1.5 s for the eight of a pass at once), so 1 s
 * would mark the stats stale whenever the machine is busy. The commands run in parallel, so a pass
 * stays within this bound plus its Zookeeper writes, under the interval.
 */
export function statsCommandTimeoutMs(periodMs: number): number {
  return Math.min(3_000, Math.max(1_000, periodMs - 2_000));
}

/** The stats pass as a {@link PrimaryDuty}; see the module comment. */
export class CephStatsDuty implements PrimaryDuty {
  readonly name = 'ceph-stats';
  private stopTimer: (() => void) | undefined;
  private abort: AbortController | undefined;
  private running: Promise<void> | undefined;
  private skipping = false;
  private stale: Record<string, string> = {};
  private staleSince: number | null = null;
  private report: PassReport | undefined;
  private passes = 0;

  constructor(private readonly deps: CephStatsDeps) {}

  /** The last pass's report (undefined before the first one ended). */
  get lastReport(): PassReport | undefined {
    return this.report;
  }

  /** Passes ended since construction (for tests and the bench). */
  get passCount(): number {
    return this.passes;
  }

  /** Starts the interval and the first pass; resolves at once (a takeover never waits for Ceph). */
  start(): Promise<void> {
    if (this.stopTimer) return Promise.resolve();
    this.abort = new AbortController();
    this.stopTimer = this.deps.clock.every(this.deps.intervalMs, () => this.tick(), this.abort.signal);
    this.deps.logger.info({ intervalMs: this.deps.intervalMs, commandTimeoutMs: this.deps.commandTimeoutMs }, 'storage stats: writing Ceph status and stats every keepalive interval');
    this.tick();
    return Promise.resolve();
  }

  async stop(): Promise<void> {
    if (!this.stopTimer) return;
    this.stopTimer();
    this.stopTimer = undefined;
    this.abort?.abort();
    await this.running;
    this.skipping = false;
    this.deps.logger.info('storage stats: stopped');
  }

  /** One due pass: started unless the last one still runs. */
  private tick(): void {
    if (this.running) {
      if (!this.skipping) this.deps.logger.warn({ intervalMs: this.deps.intervalMs }, 'storage stats: the last pass is still running; skipping passes until it ends');
      this.skipping = true;
      return;
    }
    const signal = this.abort?.signal;
    if (!signal || signal.aborted) return;
    this.running = this.pass(signal).finally(() => (this.running = undefined));
  }

  private async pass(signal: AbortSignal): Promise<void> {
    if (this.skipping) this.deps.logger.info('storage stats: passes run on time again');
    this.skipping = false;
    let report: PassReport;
    try {
      report = await statsPass(this.deps, signal);
    } catch (err) {
      if (signal.aborted) return;
      report = { stale: { zookeeper: `cannot read the pools and OSDs: ${describeError(err)}` }, written: [], durationMs: 0 };
    }
    if (signal.aborted) return;
    this.report = report;
    this.passes += 1;
    this.deps.logger.debug({ durationMs: report.durationMs, written: report.written, stale: Object.keys(report.stale) }, 'storage stats pass');
    this.note(report.stale);
    await this.writeState(signal);
  }

  /** Logs parts turning stale (once each) and the return to all current (once). */
  private note(stale: Record<string, string>): void {
    const fresh = Object.keys(stale).length === 0;
    const newly = Object.fromEntries(Object.entries(stale).filter(([k]) => !(k in this.stale)));
    if (Object.keys(newly).length > 0) {
      this.deps.logger.warn({ stale: newly }, 'storage stats stale: keys keep their last values');
    }
    if (fresh && this.staleSince !== null) {
      this.deps.logger.info({ staleForMs: this.deps.clock.now() - this.staleSince }, 'storage stats current again');
    }
    if (!fresh) this.staleSince ??= this.deps.clock.now();
    else this.staleSince = null;
    this.stale = stale;
  }

  /** `/ceph/stats_state`, its own transaction; a failure is left to the next pass (the state says why it is old). */
  private async writeState(signal: AbortSignal): Promise<void> {
    const state: CephStatsState = {
      time: Math.floor(this.deps.clock.now() / 1000),
      stale: this.stale,
      stale_since: this.staleSince === null ? null : Math.floor(this.staleSince / 1000),
      node: this.deps.node,
    };
    try {
      await this.deps.zk.write([pair(cephKeys.statsState, state)], { timeoutMs: this.deps.zkTimeoutMs, signal });
    } catch (err) {
      if (!signal.aborted) this.deps.logger.debug({ err: describeError(err) }, 'storage stats state not written');
    }
  }
}
