import { WorkQueue, type Backoff, type Clock, type Logger, type OutcomeChange, type WorkOutcome } from '@pvc/runtime';

/** Starts running at once on one node by default (a TCG createXML takes 0.3–1 s and mostly waits). */
export const DEFAULT_START_CONCURRENCY = 8;

/**
 * Delays between the tries of one VM whose start threw (cephd down, libvirtd unreachable, a ZK
 * hiccup): 1 s, doubling, at most 30 s. 1 s ≈ the old first retry (the next periodic pass), so a
 * blip costs no more than before; doubling keeps a long outage from hammering cephd/libvirtd with
 * every VM every 2 s; 30 s bounds how late a recovered VM comes up once the cause is gone, well
 * inside what an HA user waits for a failover anyway (the fence itself takes longer).
 */
export const START_BACKOFF: Backoff = { initialMs: 1000, maxMs: 30_000, factor: 2 };

/** What a start job is told. */
export interface StartRun {
  /** Aborts when starts are cancelled (halt, vmd stopping). */
  readonly signal: AbortSignal;
  /**
   * An earlier try of this VM's start threw: it may have reached libvirt (a createXML whose answer
   * was lost), so the job must look whether the domain already runs before creating it again.
   */
  readonly retry: boolean;
}

/**
 * One background start: resolves with undefined when done (or skipped), with the `failedreason` it
 * wrote when the VM failed for good (`state=fail`: a terminal outcome, not retried); rejects when
 * it failed and may work later (retried).
 */
export type StartJob = (run: StartRun) => Promise<string | undefined>;

/** What {@link StartJobs.run} did with a start. */
export type StartHandover = 'started' | 'busy' | 'backoff' | 'cancelled';

/** Options of {@link StartJobs}. */
export interface StartJobsOptions {
  /** At most this many starts at once (at least one); the others wait for a slot, in order. */
  limit: number;
  clock: Clock;
  logger: Logger;
  /** Default {@link START_BACKOFF}. */
  backoff?: Backoff;
  /** Told after a start that ended (created, or skipped because no longer wanted; not a terminal failure, whose `fail` write triggers a pass by itself): the reconciler's trigger. */
  onDone?: () => void;
  /** Told of each change of a VM's start outcome (failing, recovered), after it is logged. */
  onChange?: (uuid: string, change: OutcomeChange) => void;
}

interface Pending {
  job: StartJob;
  name: string;
}

/**
 * VM starts in the background: a {@link WorkQueue} keyed by VM UUID, `limit` at once, one per VM.
 * A pass hands its starts over and goes on, so a VM whose `state=start` arrives while others are
 * being created is planned and started at once (issue 14 item 6); starts beyond the limit wait for
 * a slot in the queue (no pass has to plan them again).
 *
 * `busy` = VMs whose start is queued, running or waiting to be retried; the plan leaves them alone
 * (as for migration jobs), so a VM is never created twice. A start that throws is retried by the
 * queue after a growing per-VM delay ({@link START_BACKOFF}) and logged once per change of its
 * error, not at every try. A libvirt/XML/bridge/RBD-lock refusal is no throw: the job writes
 * `fail` + `failedreason` (as the original) and returns the reason, the queue's terminal outcome
 * (logged once as given up; a new handover after `pvc vm start` starts afresh). The reconciler
 * {@link forget}s a VM whose start is no longer wanted, so a later `pvc vm start` is tried at once.
 */
export class StartJobs {
  private readonly queue: WorkQueue<string>;
  /** The latest job handed over per VM, kept until it ends (after the queue logged its outcome). */
  private readonly pending = new Map<string, Pending>();
  /** VMs whose last try threw (see {@link StartRun.retry}); cleared when a try ends. */
  private readonly threw = new Set<string>();
  private cancelled = false;
  /** At most this many starts at once. */
  readonly limit: number;

  constructor(opts: StartJobsOptions) {
    this.limit = Math.max(1, Math.floor(opts.limit));
    this.queue = new WorkQueue<string>({
      name: 'vm-start',
      clock: opts.clock,
      logger: opts.logger,
      concurrency: this.limit,
      backoff: opts.backoff ?? START_BACKOFF,
      describe: (uuid) => ({ vm: this.pending.get(uuid)?.name ?? uuid, uuid }),
      work: (uuid, run) => this.work(uuid, run.signal),
      onChange: (uuid, change) => {
        if (change.kind === 'gave-up') this.pending.delete(uuid);
        opts.onChange?.(uuid, change);
      },
      onDone: (uuid) => {
        // After the queue logged the outcome (its lines name the VM from here).
        this.pending.delete(uuid);
        if (!this.cancelled) opts.onDone?.();
      },
    });
  }

  /**
   * UUIDs whose start is queued, running or in backoff (a copy); once cancelled, those still
   * running (a stopped queue keeps nothing queued or waiting).
   */
  get busy(): ReadonlySet<string> {
    return new Set(this.queue.keys('queued', 'running', 'backoff'));
  }

  /** UUIDs whose start failed and waits for its retry. */
  inBackoff(): string[] {
    return this.queue.keys('backoff');
  }

  /** UUIDs whose last start failed for good (`state=fail` written); a new handover starts afresh. */
  failed(): string[] {
    return this.queue.keys('failed');
  }

  /** Failures in a row of a VM's start (0 when none). */
  failures(uuid: string): number {
    return this.queue.failures(uuid);
  }

  /** The most starts that were in progress at once (tests, status). */
  get peak(): number {
    return this.queue.peak;
  }

  /**
   * Hands `job` for VM `uuid` (named `name` in logs) to the queue. A VM already queued or in
   * backoff keeps its place but runs this, the latest, job; a running one is left alone.
   */
  run(uuid: string, job: StartJob, name = uuid): StartHandover {
    if (this.cancelled) return 'cancelled';
    const state = this.queue.state(uuid);
    if (state === 'running') return 'busy';
    // Failed for good earlier and planned again: someone wrote `start` anew.
    if (state === 'failed') this.queue.forget(uuid);
    this.pending.set(uuid, { job, name });
    if (state === 'backoff') return 'backoff';
    if (state === 'queued') return 'busy';
    this.queue.add(uuid, 'planned');
    return 'started';
  }

  /**
   * Ends a VM's failure history (its start is no longer wanted, or wanted anew): a VM in backoff
   * runs its job at once — the job re-checks ZK and does nothing if the start is not wanted.
   */
  forget(uuid: string): void {
    this.queue.forget(uuid);
  }

  /**
   * Starts nothing more: jobs that have not reached libvirt yet give up (they see the signal), a
   * createXML already sent finishes on its own deadline; retries waiting are dropped.
   */
  cancel(): void {
    this.cancelled = true;
    void this.queue.stop();
  }

  /** Cancels and waits for every job. */
  async stop(): Promise<void> {
    this.cancelled = true;
    await this.queue.stop();
  }

  private async work(uuid: string, signal: AbortSignal): Promise<WorkOutcome> {
    const p = this.pending.get(uuid);
    if (p === undefined) return { kind: 'done' };
    let failed: string | undefined;
    try {
      failed = await p.job({ signal, retry: this.threw.has(uuid) });
    } catch (err) {
      this.threw.add(uuid);
      throw err;
    }
    this.threw.delete(uuid);
    return failed === undefined ? { kind: 'done' } : { kind: 'terminal', reason: failed };
  }
}
