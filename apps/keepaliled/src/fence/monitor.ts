import type { Clock, Logger } from '@pvc/runtime';
import pLimit from 'p-limit';
import { AbortedError, describeError } from '@pvc/runtime';
import { clusterKeys, watchKey, type LockHolder, type ZkClient, type ZkOp } from '@pvc/zk';
import type { EventSink } from '../model.js';
import { underFenceLock } from './fence-lock.js';
import type { Fencer } from './fencer.js';
import type { LivenessTracker } from './liveness.js';

/**
 * Nodes one fencer fences at once. Fences are slow (BMC calls of seconds, a timeout for a BMC
 * that lost power with its node) and independent, so two nodes that die together are fenced side
 * by side. Each recovery plans its VMs on the node figures as last reported, as a sequential one
 * did (a target's figures change only once its vmd has started what it was given). The original
 * fenced one node at a time cluster-wide.
 */
export const PARALLEL_FENCES = 4;

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
 * `fenced` with domain state `fence-flush`) by a fencer that died — and hands them, up to
 * {@link PARALLEL_FENCES} at once, to the {@link Fencer} while holding the cluster fence lock. Never acts while maintenance is on, while
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
        // Not awaited: a pass outlives the check that started it, and the checks meanwhile feed it.
        void this.check(signal).catch((err: unknown) => {
          if (!signal.aborted) this.deps.logger.error({ err: describeError(err) }, 'fence check failed');
        });
        await clock.sleep(every, signal).catch((err: unknown) => {
          if (!(err instanceof AbortedError)) throw err;
        });
      }
    } finally {
      await this.pass;
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

  /**
   * One check: starts a pass under the fence lock for the candidates, or hands them to the pass
   * running now. Resolves when the pass it started ends (at once otherwise). Exposed for tests.
   */
  async check(signal: AbortSignal): Promise<void> {
    if (this.maintenance || this.deps.zk.state !== 'connected') return;
    const todo = this.candidates();
    if (this.feed) return this.feed(todo);
    if (this.busy || todo.length === 0) return;
    this.busy = true;
    const pass = this.underFenceLock(todo, signal).finally(() => (this.busy = false));
    this.pass = pass.catch(() => undefined);
    await pass;
  }

  /** The pass started last (settled once it ended), for `run` to wait for at shutdown. */
  private pass: Promise<void> = Promise.resolve();

  /** Adds nodes to the pass holding the fence lock now; set only while one does. */
  private feed: ((nodes: string[]) => void) | undefined;

  private async underFenceLock(todo: string[], outer: AbortSignal): Promise<void> {
    const windowMs = this.deps.intervalMs * this.deps.fenceIntervals;
    const breakHolder = (h: LockHolder): ZkOp[] | undefined => this.deps.liveness.deadHolderGuard(h, this.deps.self, windowMs);
    const r = await underFenceLock({ ...this.deps, breakHolder }, outer, 500, async (held) => {
      // The nodes are fenced side by side (each through its own BMC, up to PARALLEL_FENCES at
      // once), and the checks made meanwhile add any node that crossed its window (a fencer that
      // died while we waited for the lock) to this pass. Each node once per pass.
      const limit = pLimit(PARALLEL_FENCES);
      const seen = new Set<string>();
      const inFlight = new Set<Promise<void>>();
      const failures: unknown[] = [];
      const add = (nodes: string[]): void => {
        for (const node of nodes) {
          if (seen.has(node) || held.aborted || this.maintenance) continue;
          seen.add(node);
          const p: Promise<void> = limit(async () => {
            if (!held.aborted) await this.deps.fencer.handle(node, held);
          })
            .catch((err: unknown) => void failures.push(err))
            .finally(() => inFlight.delete(p));
          inFlight.add(p);
        }
      };
      this.feed = add;
      try {
        add(todo);
        while (inFlight.size > 0) await Promise.race(inFlight);
      } finally {
        this.feed = undefined;
      }
      if (failures.length > 0) throw failures[0];
    });
    if (r.kind === 'busy') this.deps.logger.debug({ todo }, 'fence lock busy; trying again at the next check');
    if (r.kind === 'interrupted') this.deps.logger.warn({ reason: describeError(r.reason) }, 'fencing interrupted; another coordinator will resume it');
  }
}
