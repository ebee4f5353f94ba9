import { describeError, WorkQueue, type Backoff, type Clock, type Logger, type WorkOutcome, untilAborted } from '@pvc/runtime';
import type { NodeResources } from '@pvc/rpc';
import { domainKeys, nodeKeys, pair, type ZkClient } from '@pvc/zk';
import { applyActions, type ActionResult, type ApplyDeps } from './apply.js';
import { DesiredStore } from './desired-store.js';
import type { Hypervisor } from './host/hypervisor.js';
import type { MigrationTracker } from './migration/tracker.js';
import type { Action, DesiredVm, ObservedDomain, ShutdownInProgress } from './model.js';
import { plan, startBlockedBy } from './plan.js';
import { computeResources } from './resources.js';
import { DEFAULT_START_CONCURRENCY, StartJobs } from './start-jobs.js';
import type { RbdStartGuard } from './storage/start-guard.js';
import { statsToWrite } from './vm-stats.js';

/** What the reconciler needs; built by the composition root (real) or tests (fakes). */
export interface ReconcilerDeps {
  zk: ZkClient;
  hv: Hypervisor;
  clock: Clock;
  logger: Logger;
  /** This node's name (`pvc.node`). */
  node: string;
  domainType: string;
  /** `vm_shutdown_timeout`, ms. */
  shutdownTimeoutMs: number;
  /** Periodic resync even without any event, ms (default 2000). */
  resyncMs?: number;
  /** How often running VMs' `stats` keys are written, ms (keepalive_interval). */
  statsIntervalMs: number;
  /** Migration jobs (send/receive in the background); absent = migration states are not acted on. */
  migrations?: MigrationTracker | undefined;
  /** Called after every pass that could list libvirt (the console/VNC watcher's sync). */
  onObserved?: (desired: ReadonlyMap<string, DesiredVm>, observed: ReadonlyMap<string, ObservedDomain>) => void;
  /** RBD lock flush before a start (passed on to apply); absent = storage disabled. */
  rbd?: RbdStartGuard | undefined;
  /** Bridges waited for before a start (passed on to apply); absent = not checked. */
  bridges?: ApplyDeps['bridges'];
  /** Node flush/unflush: told this node's `domainstate` after every pass; stopped with the loop. */
  flusher?: { sync(domainState: string | undefined): void; stop(): Promise<void> } | undefined;
  /** Starts in progress at once on this node (default {@link DEFAULT_START_CONCURRENCY}). */
  startConcurrency?: number;
}

/** What one pass did (for tests and the status log). */
export interface PassReport {
  readonly actions: readonly Action[];
  readonly results: readonly ActionResult[];
  readonly error?: string;
  /** Why the pass did nothing: libvirt could not be listed, or the ZK session is not connected. */
  readonly skipped?: 'libvirt-down' | 'zk-down';
}

/** The reconcile queue's one key: a pass over this node. */
const PASS = 'pass';

/**
 * Delays between passes while libvirt cannot be listed: a quarter of the resync period, doubling,
 * at most the resync period. A restarted libvirtd answers again within about a second, so the
 * first retries come sooner than the resync would; the cap keeps the worst case where it was (a
 * pass every `resyncMs`), and a libvirtd that stays down costs one list per period, not one per
 * ZK watch or event (adds during a backoff join the retry instead of hurrying it).
 */
export function passBackoff(resyncMs: number): Backoff {
  return { initialMs: Math.max(1, Math.round(resyncMs / 4)), maxMs: resyncMs, factor: 2 };
}

/**
 * vmd's reconcile loop: a {@link WorkQueue} of one key (the node pass), so one pass at a time, run
 * when something changed (a ZK watch, a libvirt event, a job's end via {@link trigger}; triggers
 * during a pass make exactly one more) and at least every `resyncMs` (the pass's `done` outcome
 * asks for the next one). A pass that cannot list libvirt is a `retry` ({@link passBackoff}): the
 * queue logs it once per change of the error and once when libvirt answers again. A pass lists
 * libvirt, plans against the desired state, applies, and refreshes the figures served by
 * getResources. Starts run in the background ({@link StartJobs}, bounded): a pass hands them over
 * and does not wait for them, so VMs whose `state=start` arrives a few ms apart (a recovery after a
 * fence) are created together.
 */
export class Reconciler {
  private readonly store: DesiredStore;
  /** Starts in progress (the plan leaves their VMs alone; each end triggers a pass). */
  readonly starts: StartJobs;
  private readonly shutdowns = new Map<string, ShutdownInProgress>();
  private readonly logged = new Set<string>();
  private observed = new Map<string, ObservedDomain>();
  private cache: NodeResources = { runningDomains: [], memAllocMib: 0, memProvMib: 0, vcpuAlloc: 0 };
  /** The `runningdomains` value this process last wrote (undefined: not yet). */
  private publishedRunning: string | undefined;
  private readonly queue: WorkQueue<typeof PASS>;
  private readonly resyncMs: number;
  /** run() has begun: triggers before it are covered by its first pass. */
  private running = false;
  private halted: string | undefined;
  /** A stats run is in progress (a slow one makes the next tick skip, as APScheduler's did). */
  private statsBusy = false;
  private statsError: string | undefined;
  /** Number of passes run so far. */
  passes = 0;
  /** The last pass's report. */
  last: PassReport | undefined;
  /** Called after every pass (tests wait on it). */
  onPass: ((r: PassReport) => void) | undefined;

  constructor(private readonly deps: ReconcilerDeps) {
    this.resyncMs = deps.resyncMs ?? 2000;
    this.store = new DesiredStore(deps.zk, deps.node, () => this.trigger('zk'), deps.logger.child({ component: 'desired' }));
    this.starts = new StartJobs({
      limit: deps.startConcurrency ?? DEFAULT_START_CONCURRENCY, clock: deps.clock, logger: deps.logger,
      onDone: () => this.trigger('start-ended'),
    });
    this.queue = new WorkQueue({
      name: 'reconcile', clock: deps.clock, logger: deps.logger, backoff: passBackoff(this.resyncMs),
      describe: () => ({}), work: async () => this.passOutcome(await this.pass()),
    });
  }

  /** Asks for a pass as soon as the current one (if any) is done (a pass waiting on a libvirt backoff is not hurried). */
  trigger(reason = 'trigger'): void {
    if (this.running) this.queue.add(PASS, reason);
  }

  /** The figures of the last pass (no libvirt call: keepaliled asks with a ~1 s deadline). */
  resources(): NodeResources {
    return this.cache;
  }

  /** No VM is started again by this process (after stopAll); starts not yet sent to libvirt give up. */
  halt(reason: string): void {
    this.halted = reason;
    this.starts.cancel();
  }

  /** Runs until `signal` aborts. Never touches running VMs on the way out. */
  async run(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    this.store.start();
    const stopStats = this.deps.clock.every(this.deps.statsIntervalMs, () => void this.writeStats(), signal);
    this.running = true;
    this.trigger('start');
    try {
      await untilAborted(signal);
    } finally {
      this.running = false;
      stopStats();
      await this.queue.stop();
      await this.starts.stop();
      await this.deps.flusher?.stop();
      await this.deps.migrations?.stop();
      this.store.stop();
    }
  }

  /** A pass's outcome for the queue: the periodic resync, or a retry while libvirt cannot be listed. */
  private passOutcome(r: PassReport): WorkOutcome {
    if (r.skipped === 'libvirt-down') return { kind: 'retry', reason: `cannot list libvirt domains (pass skipped, nothing done): ${r.error ?? ''}` };
    return { kind: 'done', againInMs: this.resyncMs };
  }

  /** One reconcile pass. */
  async pass(): Promise<PassReport> {
    this.passes++;
    const report = await this.passInner();
    this.last = report;
    this.onPass?.(report);
    return report;
  }

  private async passInner(): Promise<PassReport> {
    // Taken before listing: a job that ends while libvirt is listed may have created a domain the
    // list missed; its VM stays busy for this pass (the job's end triggers the next one).
    const busy = new Set([...this.starts.busy, ...(this.deps.migrations?.busy ?? [])]);
    const listFrom = this.deps.clock.now();
    try {
      this.observed = new Map((await this.deps.hv.list()).map((d) => [d.uuid, d]));
    } catch (err) {
      // Logged by the queue (the pass's retry outcome), once per change of the error.
      return { actions: [], results: [], error: describeError(err), skipped: 'libvirt-down' };
    }
    // The store follows the details of VMs running here (a newly seen one reads as incomplete
    // until its keys arrive, which triggers the next pass).
    this.store.observe([...this.observed.values()].filter((d) => d.active).map((d) => d.uuid));
    const desired = this.store.snapshot();
    this.cache = computeResources(this.deps.node, desired, this.observed);
    const guard = { ...this.store.guard(), halted: this.halted };
    if (!guard.zkConnected) return this.noteSkip('ZK session not connected: pass planned nothing');
    await this.publishRunning();
    this.deps.flusher?.sync(guard.domainState);
    this.logged.delete('zk-down');
    this.forgetUnwantedStarts(desired);
    const actions = plan({
      node: this.deps.node, desired, observed: this.observed, guard, shutdowns: this.shutdowns,
      nowMs: this.deps.clock.now(), shutdownTimeoutMs: this.deps.shutdownTimeoutMs, busy,
    });
    this.logOnce(actions);
    const starts = actions.filter((a) => a.kind === 'start').length;
    if (starts > 0) this.deps.logger.debug({ starts, busy: busy.size, listMs: this.deps.clock.now() - listFrom }, 'pass: starts planned');
    // A failed action is retried by the next periodic pass (resyncMs is the backoff), not at once;
    // a start that throws is retried by the start queue after its own growing delay.
    const results = await applyActions(actions, { ...this.deps, shutdowns: this.shutdowns, starts: this.starts, startBlocked: () => this.startBlocked() });
    this.deps.onObserved?.(desired, this.observed);
    return { actions, results };
  }

  /** Why no start may be made now (read by start jobs right before they act). */
  private startBlocked(): string | undefined {
    const guard = this.store.guard();
    if (!guard.zkConnected) return 'ZK session not connected';
    return startBlockedBy({ ...guard, halted: this.halted });
  }

  /**
   * A VM waiting to retry a failed start whose start is no longer wanted here (its state or node
   * changed, or it is gone) loses its failure history: its job runs at once, finds nothing to do
   * and ends, so the VM is no longer busy and a later `pvc vm start` is tried at once.
   */
  private forgetUnwantedStarts(desired: ReadonlyMap<string, DesiredVm>): void {
    const wantedHere = (uuid: string): boolean => {
      const vm = desired.get(uuid);
      return vm?.state === 'start' && vm.node === this.deps.node;
    };
    // A start failed for good (its VM in `fail`) is parked until it is wanted again: dropped here.
    for (const uuid of this.starts.failed()) if (!wantedHere(uuid)) this.forgetStart(uuid);
    for (const uuid of this.starts.inBackoff()) {
      if (wantedHere(uuid)) continue;
      const vm = desired.get(uuid);
      this.deps.logger.info({ vm: vm?.name ?? uuid, uuid, state: vm?.state, node: vm?.node }, 'start no longer wanted: its retry history is forgotten');
      this.forgetStart(uuid);
    }
  }

  /** A start's retry history: the queue's, and the RBD guard's count of failed lock flushes. */
  private forgetStart(uuid: string): void {
    this.starts.forget(uuid);
    this.deps.rbd?.forget(uuid);
  }

  private noteSkip(error: string): PassReport {
    if (!this.logged.has('zk-down')) this.deps.logger.warn(error);
    this.logged.add('zk-down');
    return { actions: [], results: [], error, skipped: 'zk-down' };
  }

  /** Logs each bad-input / blocked / not-implemented condition once while it lasts. */
  private logOnce(actions: readonly Action[]): void {
    const now = new Set<string>();
    for (const a of actions) {
      if (a.kind !== 'log') continue;
      const key = `${a.uuid}|${a.reason}|${a.detail}`;
      now.add(key);
      if (this.logged.has(key)) continue;
      if (a.reason === 'incomplete') {
        this.deps.logger.debug({ vm: a.name, uuid: a.uuid }, a.detail);
        continue;
      }
      const k = domainKeys(a.uuid);
      const zkKey = a.reason === 'unknown-node' ? k.node.path : k.state.path;
      this.deps.logger.warn({ vm: a.name, uuid: a.uuid, key: zkKey, reason: a.reason }, a.detail);
    }
    for (const k of [...this.logged]) if (k !== 'zk-down' && !now.has(k)) this.logged.delete(k);
    for (const k of now) this.logged.add(k);
  }

  /**
   * Writes this node's `runningdomains` (and `domainscount`) when the list changed, as the
   * original's node daemon does at every VM add/remove: a client waiting for a start, stop or
   * migration (`pvc vm start --wait`) sees it at once, not at the next keepalive (which writes the
   * same figures from the same cache). A failed write is retried by the next pass.
   */
  private async publishRunning(): Promise<void> {
    const running = this.cache.runningDomains;
    const value = running.join(' ');
    if (value === this.publishedRunning) return;
    const k = nodeKeys(this.deps.node);
    try {
      await this.deps.zk.write([pair(k.runningDomains, [...running]), pair(k.domainsCount, running.length)]);
      this.publishedRunning = value;
    } catch (err) {
      this.deps.logger.debug({ err: describeError(err) }, 'runningdomains not written; next pass retries');
    }
  }

  /**
   * Writes `stats` of every running domain PVC knows, in the original's layout (`vm-stats.ts`),
   * each in its own transaction (one failure skips one VM). A failed libvirt read skips the round,
   * logged once while it lasts.
   */
  async writeStats(): Promise<void> {
    if (this.deps.zk.state !== 'connected' || this.statsBusy) return;
    this.statsBusy = true;
    try {
      const stats = await this.deps.hv.stats();
      if (this.statsError !== undefined) this.deps.logger.info('VM statistics readable again');
      this.statsError = undefined;
      const known = this.store.uuids();
      const writes = statsToWrite(stats, known).map(([uuid, record]) => this.deps.zk.write([pair(domainKeys(uuid).stats, record)]));
      const failed = (await Promise.allSettled(writes)).filter((r) => r.status === 'rejected');
      if (failed.length > 0) this.deps.logger.debug({ failed: failed.length }, 'some stats writes failed');
    } catch (err) {
      const error = describeError(err);
      if (this.statsError === undefined) this.deps.logger.warn({ err: error }, 'cannot read VM statistics; stats keys not updated');
      this.statsError = error;
    } finally {
      this.statsBusy = false;
    }
  }
}
