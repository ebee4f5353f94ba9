import { describeError } from '@pvc/runtime';
import type { MigrationDeps } from './deps.js';
import { receiveVm } from './receive.js';
import { sendVm } from './send.js';

/** One migration job the plan asked for. */
export type MigrationJob = { side: 'send'; uuid: string; name: string; target: string } | { side: 'receive'; uuid: string; name: string };

/**
 * Runs migrations in the background (a send or receive lasts seconds to minutes; passes go on for
 * other VMs meanwhile). `busy` = VMs with a job running: the plan leaves them alone (the
 * original's inmigrate/inreceive flags). `onDone` (the reconciler's trigger) runs after each job.
 */
export class MigrationTracker {
  private readonly jobs = new Map<string, Promise<void>>();
  private readonly ac = new AbortController();
  onDone: (() => void) | undefined;
  /** Outcomes so far, `<side> <uuid> <outcome>` (tests, status). */
  readonly outcomes: string[] = [];

  constructor(private readonly deps: MigrationDeps) {}

  /** UUIDs with a job in progress. */
  get busy(): ReadonlySet<string> {
    return new Set(this.jobs.keys());
  }

  /** Starts a job unless one runs for that VM. */
  start(job: MigrationJob): void {
    if (this.jobs.has(job.uuid) || this.ac.signal.aborted) return;
    const run = async (): Promise<void> => {
      const signal = this.ac.signal;
      try {
        const outcome = job.side === 'send'
          ? await sendVm(job.uuid, job.name, job.target, this.deps, signal)
          : await receiveVm(job.uuid, job.name, this.deps, signal);
        this.outcomes.push(`${job.side} ${job.uuid} ${outcome}`);
      } catch (err) {
        this.outcomes.push(`${job.side} ${job.uuid} error`);
        if (!signal.aborted) this.deps.logger.error({ vm: job.name, uuid: job.uuid, side: job.side, err: describeError(err) }, 'migration job failed');
      } finally {
        this.jobs.delete(job.uuid);
        this.onDone?.();
      }
    };
    this.jobs.set(job.uuid, run());
  }

  /** Stops waiting in every job (a running virsh migrate finishes on its own bound) and waits for them. */
  async stop(): Promise<void> {
    this.ac.abort();
    await Promise.allSettled([...this.jobs.values()]);
  }
}
