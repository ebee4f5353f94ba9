import type { Clock } from '@pvc/runtime';

/** Starts running at once on one node by default (a TCG createXML takes 0.3–1 s and mostly waits). */
export const DEFAULT_START_CONCURRENCY = 8;

/** One background start: resolves when done (or skipped), rejects when it failed. */
export type StartJob = (signal: AbortSignal) => Promise<void>;

/** What {@link StartJobs.run} did with a start. */
export type StartHandover = 'started' | 'busy' | 'full' | 'backoff' | 'cancelled';

/** Options of {@link StartJobs}. */
export interface StartJobsOptions {
  /** At most this many starts at once (at least one). */
  limit: number;
  clock: Clock;
  /** A VM whose start failed is not started again before this many ms (the reconciler: resyncMs / 2). */
  retryAfterMs: number;
}

/**
 * VM starts in the background, at most `limit` at once, one per VM. A pass hands its starts over
 * and goes on, so a VM whose `state=start` arrives while others are being created is planned and
 * started at once instead of waiting for the whole pass (issue 14 item 6: the reconciler used to
 * await every createXML of a pass before it looked at ZK again).
 *
 * Level-based, no queue of its own: a start refused (no room, or backing off) is simply planned
 * again by a later pass. `busy` = VMs with a start in progress; the plan leaves them alone (as for
 * migration jobs), so a VM is never created twice. `onDone` (the reconciler's trigger) runs after
 * a job that succeeded or was skipped — the next pass sees the domain, and starts refused for
 * lack of room get the slot. A failed job does not call it, and its VM is not started again for
 * `retryAfterMs`: a failing start (cephd down, libvirtd unreachable) is retried by the periodic
 * pass, the resync period being the backoff as before, not by every pass that other starts'
 * ends trigger.
 */
export class StartJobs {
  private readonly jobs = new Map<string, Promise<void>>();
  private readonly failedAt = new Map<string, number>();
  private readonly ac = new AbortController();
  /** At most this many starts at once. */
  readonly limit: number;
  /** The most starts that were in progress at once (tests, status). */
  peak = 0;
  onDone: (() => void) | undefined;

  constructor(private readonly opts: StartJobsOptions) {
    this.limit = Math.max(1, Math.floor(opts.limit));
  }

  /** UUIDs with a start in progress (a copy). */
  get busy(): ReadonlySet<string> {
    return new Set(this.jobs.keys());
  }

  /** Runs `job` for VM `uuid` in the background, unless that VM or the node is not ready for it. */
  run(uuid: string, job: StartJob): StartHandover {
    if (this.ac.signal.aborted) return 'cancelled';
    if (this.jobs.has(uuid)) return 'busy';
    const failed = this.failedAt.get(uuid);
    if (failed !== undefined && this.opts.clock.now() - failed < this.opts.retryAfterMs) return 'backoff';
    if (this.jobs.size >= this.limit) return 'full';
    const signal = this.ac.signal;
    const done = (ok: boolean): void => {
      this.jobs.delete(uuid);
      if (ok) this.failedAt.delete(uuid);
      else this.failedAt.set(uuid, this.opts.clock.now());
      if (ok && !signal.aborted) this.onDone?.();
    };
    // The job logs its own failure; here it only decides what comes next.
    this.jobs.set(uuid, job(signal).then(() => done(true), () => done(false)));
    this.peak = Math.max(this.peak, this.jobs.size);
    return 'started';
  }

  /**
   * Starts nothing more: jobs that have not reached libvirt yet give up (they see the signal), a
   * createXML already sent finishes on its own deadline.
   */
  cancel(): void {
    this.ac.abort();
  }

  /** Cancels and waits for every job. */
  async stop(): Promise<void> {
    this.cancel();
    await Promise.allSettled([...this.jobs.values()]);
  }
}
