import type { Clock, Logger } from '@pvc/runtime';
import { AbortedError, describeError } from '@pvc/runtime';
import { isZkError, nodeKeys, pair, readKey, watchKey, type DaemonState, type WritePair, type ZkClient } from '@pvc/zk';
import type { EventSink } from '../model.js';
import type { FigureGatherer, NodeFigures } from './figures.js';

/** Timing and log settings of the keepalive loop (from `system.fencing` and `…logging`). */
export interface KeepaliveSettings {
  intervalMs: number;
  /** Bound of the figure gathering; well under the interval so the write is never late. */
  figuresDeadlineMs: number;
  logKeepalives: boolean;
  logClusterDetails: boolean;
}

export interface KeepaliveDeps {
  node: string;
  zk: ZkClient;
  clock: Clock;
  logger: Logger;
  figures: FigureGatherer;
  events: EventSink;
  settings: KeepaliveSettings;
  /** Extra fields for the keepalive log line (health, plugins), if any. */
  logExtras?: () => Record<string, unknown>;
}

/** What one successful write did. */
interface Written {
  nowMs: number;
  /** The daemon state replaced by `run` (`(unset)` when it was unknown), if the write set it. */
  replaced: string | undefined;
}

/** Bound of the figures of the very first keepalive, ms. */
const FIRST_FIGURES_DEADLINE_MS = 200;

/** Daemon states a keepalive leaves alone: the supervisor owns shutdown and stop. */
const KEEP_STATES: ReadonlySet<DaemonState | undefined> = new Set<DaemonState>(['run', 'shutdown', 'stop']);

/**
 * The node's heartbeat: every interval one ZK transaction with the keepalive timestamp and the
 * node's figures, and daemon state `run` when it was init/dead/fenced (or unreadable). The first
 * keepalive is sent at once. Runs on a fixed schedule; a keepalive still running when the next is
 * due makes that one skipped (never two at once). Failures are counted (see {@link missed}) for the
 * suicide watch and reported as events.
 */
export class KeepaliveLoop {
  /** Absent, empty or unknown (logged by the key reader) is `undefined`: the keepalive writes `run`. */
  private daemonState: DaemonState | undefined;
  private daemonStateKnown = false;
  private lastOk: number;
  private missedCount = 0;
  private lastWrittenMs = 0;
  private readonly listeners = new Set<(ok: boolean) => void>();

  constructor(private readonly deps: KeepaliveDeps) {
    this.lastOk = deps.clock.now();
  }

  /** Clock ms of the last keepalive written (0 = none yet). */
  get lastKeepaliveMs(): number {
    return this.lastWrittenMs;
  }

  /** Consecutive keepalives that could not be written. */
  get missed(): number {
    return this.missedCount;
  }

  /** Clock ms since the last successful keepalive (or since start). */
  silentForMs(): number {
    return this.deps.clock.now() - this.lastOk;
  }

  /** The node's daemon state as last seen (watched). */
  get currentDaemonState(): DaemonState | undefined {
    return this.daemonState;
  }

  /** Called after every keepalive attempt with its outcome. */
  onResult(listener: (ok: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Runs until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const { clock, zk, node } = this.deps;
    const unwatch = watchKey(zk, nodeKeys(node).daemonState, (v) => {
      this.daemonState = v;
      this.daemonStateKnown = true;
    }, this.deps.logger);
    try {
      let due = clock.now();
      while (!signal.aborted) {
        await this.tick(signal);
        due += this.deps.settings.intervalMs;
        const now = clock.now();
        // Overran: skip the keepalives that are already past, keep the schedule's phase.
        if (due < now) due += Math.ceil((now - due) / this.deps.settings.intervalMs) * this.deps.settings.intervalMs;
        await clock.sleep(due - now, signal).catch((err: unknown) => {
          if (!(err instanceof AbortedError)) throw err;
        });
      }
    } finally {
      unwatch();
    }
  }

  /** One keepalive. Resolves true when it was written. Never rejects (except on abort). */
  async tick(signal?: AbortSignal): Promise<boolean> {
    const { settings } = this.deps;
    // The first keepalive (daemon state → run) does not wait for peers that are still starting.
    const deadline = this.lastWrittenMs === 0 ? Math.min(settings.figuresDeadlineMs, FIRST_FIGURES_DEADLINE_MS) : settings.figuresDeadlineMs;
    const figures = await this.deps.figures.gather(deadline, signal);
    // Half the interval per attempt: a server that does not answer in time is left for the next
    // one (the session survives) and the keepalive is tried again within the same interval — a
    // coordinator losing its ZK server must not look dead to the fencers.
    const attemptMs = Math.max(250, Math.floor(settings.intervalMs / 2));
    let written: Written;
    try {
      written = await this.writeOnce(figures, attemptMs, signal);
    } catch (err) {
      if (signal?.aborted) throw err;
      if (!isZkError(err, 'OPERATION_TIMEOUT', 'CONNECTION_LOSS')) return this.failed(err);
      this.deps.zk.dropConnection();
      try {
        await this.deps.zk.waitConnected({ timeoutMs: attemptMs, signal });
        written = await this.writeOnce(figures, attemptMs, signal);
      } catch (again) {
        if (signal?.aborted) throw again;
        return this.failed(again);
      }
    }
    this.succeeded(figures, written);
    return true;
  }

  /** One attempt; resolves with the clock time written and the daemon state it replaced, if any. */
  private async writeOnce(figures: NodeFigures, timeoutMs: number, signal: AbortSignal | undefined): Promise<Written> {
    const nowMs = this.deps.clock.now();
    // Until the watch has delivered, read the state: a keepalive must never overwrite the
    // supervisor's `shutdown`/`stop` with `run` because it did not know them yet.
    if (!this.daemonStateKnown) {
      this.daemonState = await readKey(this.deps.zk, nodeKeys(this.deps.node).daemonState, { timeoutMs, signal, logger: this.deps.logger });
    }
    const before = this.daemonState;
    const toRun = !KEEP_STATES.has(before);
    await this.deps.zk.write(this.pairs(figures, nowMs, toRun), { timeoutMs, signal });
    return { nowMs, replaced: toRun ? (before ?? '(unset)') : undefined };
  }

  /** The transaction: a down peer's keys are left out, so ZK keeps its last values (their mtime shows their age). */
  private pairs(f: NodeFigures, nowMs: number, toRun: boolean): WritePair[] {
    const k = nodeKeys(this.deps.node);
    const pairs: WritePair[] = [
      pair(k.memTotal, Math.round(f.memory.totalMiB)),
      pair(k.memUsed, Math.round(f.memory.usedMiB)),
      pair(k.memFree, Math.round(f.memory.freeMiB)),
    ];
    if (!f.down.includes('vmd')) {
      pairs.push(
        pair(k.memAlloc, Math.round(f.resources.memAllocMib)),
        pair(k.memProv, Math.round(f.resources.memProvMib)),
        pair(k.vcpuAlloc, Math.round(f.resources.vcpuAlloc)),
      );
    }
    pairs.push(pair(k.cpuLoad, Math.round(f.load1 * 100) / 100));
    if (!f.down.includes('vmd')) {
      pairs.push(pair(k.domainsCount, f.resources.runningDomains.length), pair(k.runningDomains, f.resources.runningDomains));
    }
    // Already JSON text, as netd produced it (re-encoding would only parse and print it again).
    if (!f.down.includes('netd')) pairs.push([k.networkStats.path, f.networkStatsJson]);
    pairs.push(pair(k.keepalive, Math.floor(nowMs / 1000)));
    if (toRun) pairs.push(pair(k.daemonState, 'run'));
    return pairs;
  }

  private succeeded(f: NodeFigures, { nowMs, replaced }: Written): void {
    const { node, events, logger, settings } = this.deps;
    if (replaced !== undefined) {
      events({ kind: 'daemon-state', node, from: replaced, to: 'run', reason: 'keepalive' });
      this.daemonState = 'run';
    }
    if (this.missedCount > 0) logger.info({ missed: this.missedCount }, 'keepalives are written again');
    this.missedCount = 0;
    this.lastOk = nowMs;
    this.lastWrittenMs = nowMs;
    if (settings.logKeepalives) {
      const details = settings.logClusterDetails
        ? {
            domains: f.resources.runningDomains.length,
            memFreeMiB: Math.round(f.memory.freeMiB),
            memAllocMiB: f.resources.memAllocMib,
            load: Math.round(f.load1 * 100) / 100,
            ...(f.stale.length > 0 ? { stale: f.stale } : {}),
            ...(f.down.length > 0 ? { down: f.down } : {}),
          }
        : {};
      logger.info({ ...details, ...this.deps.logExtras?.() }, 'keepalive');
    }
    for (const l of this.listeners) l(true);
  }

  private failed(err: unknown): false {
    this.missedCount += 1;
    const error = describeError(err);
    this.deps.events({ kind: 'keepalive-failed', node: this.deps.node, missed: this.missedCount, error });
    this.deps.logger.warn({ missed: this.missedCount, err: error }, 'keepalive could not be written');
    for (const l of this.listeners) l(false);
    return false;
  }
}
