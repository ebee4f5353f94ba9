import type { Clock, Logger } from '@pvc/runtime';
import { AbortedError, describeError } from '@pvc/runtime';
import { clusterKeys, watchKey, type LockHolder, type ZkClient, type ZkOp } from '@pvc/zk';
import type { EventSink } from '../model.js';
import { underFenceLock } from './fence-lock.js';
import type { Fencer } from './fencer.js';
import type { LivenessTracker } from './liveness.js';

export interface FenceMonitorDeps {
  self: string;
  zk: ZkClient;
  clock: Clock;
  logger: Logger;
  events: EventSink;
  liveness: LivenessTracker;
  fencer: Fencer;
  intervalMs: number;
  fenceIntervals: number;
  /** How often the (cheap, in-memory) staleness check runs; default {@link checkPeriodMs}. */
  checkEveryMs?: number;
}

/**
 * How often the staleness check runs: a tenth of the keepalive interval, 50–250 ms, so a death is
 * noticed within that much of the detection window ending (it only reads memory; ZK is read for
 * candidates only). The original checked once per keepalive, up to a whole interval late.
 */
export function checkPeriodMs(intervalMs: number): number {
  return Math.max(50, Math.min(250, Math.round(intervalMs / 10)));
}

/**
 * Runs on every coordinator. Finds nodes to act on — a `run` node whose keepalive we have not seen
 * change for `keepalive_interval × fence_intervals`, or a node left half-fenced (`dead` or
 * `fenced` with domain state `fence-flush`) by a fencer that died — and hands them, one at a time, to the
 * {@link Fencer} while holding the cluster fence lock. Never acts while maintenance is on, while
 * our ZK session is not connected (no quorum), or after losing the fence lock.
 */
export class FenceMonitor {
  private maintenance = false;
  private busy = false;

  constructor(private readonly deps: FenceMonitorDeps) {}

  /** Runs until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const { zk, clock, fenceIntervals } = this.deps;
    if (fenceIntervals <= 0) {
      this.deps.logger.info('fence_intervals is 0: fencing is disabled on this node');
      return;
    }
    // Read as the original's node daemon reads it (strtobool: any spelling of "on"); absent, empty
    // or unreadable (logged with its key) is the original's default, off.
    const unwatch = watchKey(zk, clusterKeys.maintenance, (on) => void (this.maintenance = on === true), this.deps.logger);
    const every = this.deps.checkEveryMs ?? checkPeriodMs(this.deps.intervalMs);
    try {
      while (!signal.aborted) {
        await this.check(signal).catch((err: unknown) => {
          if (!signal.aborted) this.deps.logger.error({ err: describeError(err) }, 'fence check failed');
        });
        await clock.sleep(every, signal).catch((err: unknown) => {
          if (!(err instanceof AbortedError)) throw err;
        });
      }
    } finally {
      unwatch();
    }
  }

  /** Nodes needing a fencer now (never ourselves). */
  candidates(): string[] {
    const windowMs = this.deps.intervalMs * this.deps.fenceIntervals;
    return this.deps.liveness
      .nodes()
      .filter((n) => n.name !== this.deps.self)
      .filter((n) => {
        if (n.daemonState === 'dead' || n.daemonState === 'fenced') return n.domainState === 'fence-flush';
        return n.daemonState === 'run' && (this.deps.liveness.silentForMs(n.name) ?? 0) >= windowMs;
      })
      .map((n) => n.name);
  }

  /** One pass. Exposed for tests. */
  async check(signal: AbortSignal): Promise<void> {
    if (this.busy || this.maintenance || this.deps.zk.state !== 'connected') return;
    const todo = this.candidates();
    if (todo.length === 0) return;
    this.busy = true;
    try {
      await this.underFenceLock(todo, signal);
    } finally {
      this.busy = false;
    }
  }

  private async underFenceLock(todo: string[], outer: AbortSignal): Promise<void> {
    const windowMs = this.deps.intervalMs * this.deps.fenceIntervals;
    const breakHolder = (h: LockHolder): ZkOp[] | undefined => this.deps.liveness.deadHolderGuard(h, this.deps.self, windowMs);
    const r = await underFenceLock({ ...this.deps, breakHolder }, outer, 500, async (held) => {
      // Candidates are looked at again after each node: one that crossed its window meanwhile (a
      // fencer that died while we waited for the lock) is handled in the same pass.
      const done = new Set<string>();
      for (let node: string | undefined = todo[0]; node !== undefined; node = this.candidates().find((n) => !done.has(n))) {
        if (held.aborted || this.maintenance) break;
        done.add(node);
        await this.deps.fencer.handle(node, held);
      }
    });
    if (r.kind === 'busy') this.deps.logger.debug({ todo }, 'fence lock busy; trying again at the next check');
    if (r.kind === 'interrupted') this.deps.logger.warn({ reason: describeError(r.reason) }, 'fencing interrupted; another coordinator will resume it');
  }
}
