import { setMaxListeners } from 'node:events';
import type { Clock } from './clock.js';
import { describeError } from './errors.js';
import type { Logger } from './logger.js';

/**
 * What one run of a key's work decided.
 * - `done`: it worked (a failure streak ends). `againInMs`: run the key again after that long
 *   unless something asks for it sooner (a periodic resync, a poll).
 * - `retry`: it failed and may work later: run again after the key's backoff (`afterMs`
 *   overrides the computed delay for this one failure).
 * - `terminal`: it failed for good: not run again until {@link WorkQueue.forget} (adds are ignored).
 */
export type WorkOutcome =
  | { readonly kind: 'done'; readonly againInMs?: number }
  | { readonly kind: 'retry'; readonly reason: string; readonly afterMs?: number }
  | { readonly kind: 'terminal'; readonly reason: string };

/** What a run of the work is given. */
export interface WorkRun {
  /** Why it runs: every `add` reason merged into this run, in order. */
  readonly reasons: readonly string[];
  /** Failures in a row before this run (0: the last run worked, or the first run). */
  readonly failures: number;
  /** Aborts when the queue stops. */
  readonly signal: AbortSignal;
}

/** Growing delays between retries of one key: `initialMs × factor^(failures − 1)`, at most `maxMs`. */
export interface Backoff {
  readonly initialMs: number;
  readonly maxMs: number;
  /** Default 2. */
  readonly factor?: number;
}

/** Where a key is. `backoff`: failed, waiting to be retried; `failed`: a terminal outcome. */
export type WorkState = 'queued' | 'running' | 'backoff' | 'failed' | 'idle';

/** A change of a key's outcome, as logged (once per change). */
export type OutcomeChange =
  | { readonly kind: 'failing'; readonly reason: string; readonly failures: number; readonly retryInMs: number }
  | { readonly kind: 'recovered'; readonly failures: number }
  | { readonly kind: 'gave-up'; readonly reason: string; readonly failures: number };

export interface WorkQueueOptions<K> {
  /** Names the queue in its log lines. */
  readonly name: string;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly work: (key: K, run: WorkRun) => Promise<WorkOutcome>;
  /** Keys run at once (default 1). One key never runs twice at once. */
  readonly concurrency?: number;
  readonly backoff: Backoff;
  /** Failures in a row after which a key is given up (a terminal outcome). Default: never. */
  readonly maxFailures?: number;
  /** Log fields naming a key (default `{ key }`). */
  readonly describe?: (key: K) => Record<string, unknown>;
  /** Told of every outcome change, after it is logged. */
  readonly onChange?: (key: K, change: OutcomeChange) => void;
  /** Told after every run that returned `done` (e.g. to trigger a follow-up pass). */
  readonly onDone?: (key: K) => void;
}

interface Entry {
  state: WorkState;
  /** Reasons of adds not yet taken by a run. */
  reasons: string[];
  /** An add came while the key ran: run it again when the run ends. */
  dirty: boolean;
  failures: number;
  lastReason: string | undefined;
  /** The backoff or resync timer. */
  timer: AbortController | undefined;
}

/** The delay before retry number `failures` (1-based). */
export function backoffDelay(b: Backoff, failures: number): number {
  const factor = b.factor ?? 2;
  return Math.min(b.maxMs, Math.round(b.initialMs * factor ** Math.max(0, failures - 1)));
}

/**
 * A keyed work queue: the one reconcile loop of every service (vmd's passes and starts, the
 * primary election, the node flusher). Callers say *that* a key needs work ({@link add}, level
 * based: adding a key that is already queued, running or waiting merges into what is pending);
 * the queue decides *when*:
 * - adds of one key while it is queued merge into one run; an add while it runs makes exactly one
 *   more run after it (never two runs of one key at once);
 * - at most `concurrency` keys run at once, the others wait in the order they were added;
 * - a failed run (`retry`, or a throw) is run again after a growing per-key delay ({@link Backoff});
 *   adds meanwhile join that retry instead of hurrying it; a `terminal` outcome (or `maxFailures`
 *   failures in a row) parks the key until {@link forget};
 * - `done` with `againInMs` runs the key again after that long unless an add comes first;
 * - each change of a key's outcome is logged once — its first failure, a different failure
 *   reason, its recovery, giving up — never every retry.
 * Time comes from the injected clock, so the simulator runs it in virtual time.
 */
export class WorkQueue<K> {
  private readonly entries = new Map<K, Entry>();
  private readonly order: K[] = [];
  private running = 0;
  private readonly runs = new Set<Promise<void>>();
  private readonly ac = new AbortController();
  private pumpScheduled = false;
  private readonly concurrency: number;
  /** The most keys that ran at once (tests, status). */
  peak = 0;

  constructor(private readonly opts: WorkQueueOptions<K>) {
    this.concurrency = Math.max(1, Math.floor(opts.concurrency ?? 1));
    // Every waiting key's timer and every run listen on the queue's signal: one per VM for starts.
    setMaxListeners(0, this.ac.signal);
  }

  /** Asks for a run of `key`; returns where the key is now (`failed`: ignored; `idle`: stopped). */
  add(key: K, reason: string): WorkState {
    if (this.ac.signal.aborted) return 'idle';
    const e = this.entry(key);
    switch (e.state) {
      case 'idle':
        e.timer?.abort();
        e.timer = undefined;
        e.reasons.push(reason);
        this.enqueue(key, e);
        break;
      case 'running':
        e.dirty = true;
        e.reasons.push(reason);
        break;
      case 'queued':
      case 'backoff':
        e.reasons.push(reason);
        break;
      case 'failed':
        break;
    }
    return e.state;
  }

  /**
   * Ends a key's failure history (what made it fail changed, or the key is gone): a key in
   * backoff runs at once (with the reasons added meanwhile, or `retry`), a failed one becomes idle,
   * the streak restarts.
   */
  forget(key: K): void {
    const e = this.entries.get(key);
    if (!e) return;
    e.failures = 0;
    e.lastReason = undefined;
    if (e.state === 'backoff') {
      e.timer?.abort();
      e.timer = undefined;
      if (e.reasons.length === 0) e.reasons.push('retry');
      this.enqueue(key, e);
    } else if (e.state === 'failed') {
      e.state = 'idle';
    }
    this.prune(key, e);
  }

  /** Where `key` is. */
  state(key: K): WorkState {
    return this.entries.get(key)?.state ?? 'idle';
  }

  /** Failures in a row of `key` (0 when none). */
  failures(key: K): number {
    return this.entries.get(key)?.failures ?? 0;
  }

  /** Keys in any of `states`. */
  keys(...states: WorkState[]): K[] {
    return [...this.entries].filter(([, e]) => states.includes(e.state)).map(([k]) => k);
  }

  /** Resolves once no key runs or is queued (keys waiting on a timer do not count). */
  async idle(): Promise<void> {
    while (this.runs.size > 0 || this.order.length > 0) {
      if (this.runs.size > 0) await Promise.race(this.runs);
      else await Promise.resolve();
    }
  }

  /** Runs nothing more: timers are cancelled, running work sees its signal abort and is awaited. */
  async stop(): Promise<void> {
    this.ac.abort();
    for (const e of this.entries.values()) e.timer?.abort();
    this.order.length = 0;
    // Nothing is queued or waiting any more; keys still running become idle when their run ends.
    for (const [k, e] of this.entries) if (e.state !== 'running') this.entries.delete(k);
    await Promise.allSettled([...this.runs]);
  }

  private entry(key: K): Entry {
    let e = this.entries.get(key);
    if (!e) {
      e = { state: 'idle', reasons: [], dirty: false, failures: 0, lastReason: undefined, timer: undefined };
      this.entries.set(key, e);
    }
    return e;
  }

  /** An idle key with no history and no timer is dropped (a queue of many short-lived keys stays small). */
  private prune(key: K, e: Entry): void {
    if (e.state === 'idle' && e.failures === 0 && e.timer === undefined && e.reasons.length === 0) this.entries.delete(key);
  }

  private enqueue(key: K, e: Entry): void {
    e.state = 'queued';
    this.order.push(key);
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    // Adds made in the same tick are queued before any of them starts.
    queueMicrotask(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    while (this.running < this.concurrency && this.order.length > 0 && !this.ac.signal.aborted) {
      const key = this.order.shift() as K;
      const e = this.entries.get(key);
      if (e?.state !== 'queued') continue;
      const run = this.run(key, e);
      this.runs.add(run);
      void run.finally(() => this.runs.delete(run));
    }
  }

  private async run(key: K, e: Entry): Promise<void> {
    this.running++;
    this.peak = Math.max(this.peak, this.running);
    e.state = 'running';
    e.dirty = false;
    const reasons = e.reasons;
    e.reasons = [];
    let outcome: WorkOutcome;
    try {
      outcome = await this.opts.work(key, { reasons, failures: e.failures, signal: this.ac.signal });
    } catch (err) {
      outcome = { kind: 'retry', reason: describeError(err) };
    } finally {
      this.running--;
    }
    if (this.ac.signal.aborted) {
      e.state = 'idle';
      return;
    }
    this.settle(key, e, outcome);
    this.pump();
  }

  private settle(key: K, e: Entry, outcome: WorkOutcome): void {
    if (outcome.kind === 'done') {
      if (e.failures > 0) this.change(key, { kind: 'recovered', failures: e.failures });
      e.failures = 0;
      e.lastReason = undefined;
      if (e.dirty) this.enqueue(key, e);
      else {
        e.state = 'idle';
        if (outcome.againInMs !== undefined) this.after(e, outcome.againInMs, () => this.add(key, 'again'));
      }
      this.opts.onDone?.(key);
      this.prune(key, e);
      return;
    }
    e.failures++;
    const max = this.opts.maxFailures;
    if (outcome.kind === 'terminal' || (max !== undefined && e.failures >= max)) {
      e.state = 'failed';
      e.reasons = [];
      this.change(key, { kind: 'gave-up', reason: outcome.reason, failures: e.failures });
      e.lastReason = outcome.reason;
      return;
    }
    const retryInMs = outcome.afterMs ?? backoffDelay(this.opts.backoff, e.failures);
    if (outcome.reason !== e.lastReason) this.change(key, { kind: 'failing', reason: outcome.reason, failures: e.failures, retryInMs });
    else this.opts.logger.debug({ queue: this.opts.name, ...this.fields(key), failures: e.failures, retryInMs, err: outcome.reason }, `${this.opts.name}: failed again; retrying`);
    e.lastReason = outcome.reason;
    e.state = 'backoff';
    this.after(e, retryInMs, () => {
      if (e.state !== 'backoff') return;
      if (e.reasons.length === 0) e.reasons.push('retry');
      this.enqueue(key, e);
    });
  }

  private after(e: Entry, ms: number, fire: () => void): void {
    const timer = new AbortController();
    e.timer = timer;
    this.opts.clock.sleep(ms, AbortSignal.any([timer.signal, this.ac.signal])).then(() => {
      if (e.timer !== timer) return;
      e.timer = undefined;
      fire();
    }, () => undefined);
  }

  private fields(key: K): Record<string, unknown> {
    return this.opts.describe ? this.opts.describe(key) : { key };
  }

  private change(key: K, c: OutcomeChange): void {
    const { logger, name } = this.opts;
    const base = { queue: name, ...this.fields(key), failures: c.failures };
    if (c.kind === 'failing') logger.warn({ ...base, retryInMs: c.retryInMs, err: c.reason }, `${name}: failed; retrying with growing delays (logged again when the reason changes)`);
    else if (c.kind === 'recovered') logger.info(base, `${name}: works again`);
    else logger.error({ ...base, err: c.reason }, `${name}: gave up (not retried until what it depends on changes)`);
    this.opts.onChange?.(key, c);
  }
}
