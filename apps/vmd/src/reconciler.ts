import { AbortedError, describeError, type Clock, type Logger } from '@pvc/runtime';
import type { NodeResources } from '@pvc/rpc';
import { domainKeys, nodeKeys, pair, type ZkClient } from '@pvc/zk';
import { applyActions, type ActionResult, type ApplyDeps } from './apply.js';
import { DesiredStore } from './desired-store.js';
import type { Hypervisor } from './host/hypervisor.js';
import type { MigrationTracker } from './migration/tracker.js';
import type { Action, DesiredVm, ObservedDomain, ShutdownInProgress } from './model.js';
import { plan } from './plan.js';
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
}

/**
 * vmd's reconcile loop: one pass at a time, run when something changed (a ZK watch, a libvirt
 * event via {@link trigger}) and at least every `resyncMs`. A pass lists libvirt, plans against
 * the desired state, applies, and refreshes the figures served by getResources. Starts run in the
 * background ({@link StartJobs}, bounded): a pass hands them over and does not wait for them, so
 * VMs whose `state=start` arrives a few ms apart (a recovery after a fence) are created together.
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
  private dirty = true;
  private wake = new AbortController();
  private halted: string | undefined;
  private libvirtDown: string | undefined;
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
    this.store = new DesiredStore(deps.zk, deps.node, () => this.trigger(), deps.logger.child({ component: 'desired' }));
    // Half a resync period: a failed start is not retried by passes other starts' ends trigger,
    // but the next periodic pass (≥ resyncMs after the one that started it) does retry it.
    const retryAfterMs = (deps.resyncMs ?? 2000) / 2;
    this.starts = new StartJobs({ limit: deps.startConcurrency ?? DEFAULT_START_CONCURRENCY, clock: deps.clock, retryAfterMs });
    this.starts.onDone = () => this.trigger();
  }

  /** Asks for a pass as soon as the current one (if any) is done. */
  trigger(): void {
    this.dirty = true;
    this.wake.abort();
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
    this.store.start();
    const stopStats = this.deps.clock.every(this.deps.statsIntervalMs, () => void this.writeStats(), signal);
    try {
      while (!signal.aborted) {
        if (this.dirty) {
          this.dirty = false;
          await this.pass();
        }
        await this.idle(signal);
      }
    } finally {
      stopStats();
      await this.starts.stop();
      await this.deps.flusher?.stop();
      await this.deps.migrations?.stop();
      this.store.stop();
    }
  }

  private async idle(signal: AbortSignal): Promise<void> {
    if (this.dirty || signal.aborted) return;
    this.wake = new AbortController();
    try {
      await this.deps.clock.sleep(this.deps.resyncMs ?? 2000, AbortSignal.any([signal, this.wake.signal]));
      this.dirty = true;
    } catch (err) {
      if (!(err instanceof AbortedError)) throw err;
    }
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
      if (this.libvirtDown !== undefined) this.deps.logger.info('libvirt answers again');
      this.libvirtDown = undefined;
    } catch (err) {
      const error = describeError(err);
      if (this.libvirtDown === undefined) this.deps.logger.error({ err: error }, 'cannot list libvirt domains: pass skipped, nothing done');
      this.libvirtDown = error;
      return { actions: [], results: [], error };
    }
    const desired = this.store.snapshot();
    this.cache = computeResources(this.deps.node, desired, this.observed);
    const guard = { ...this.store.guard(), halted: this.halted };
    if (!guard.zkConnected) return this.noteSkip('ZK session not connected: pass planned nothing');
    await this.publishRunning();
    this.deps.flusher?.sync(guard.domainState);
    this.logged.delete('zk-down');
    const actions = plan({
      node: this.deps.node, desired, observed: this.observed, guard, shutdowns: this.shutdowns,
      nowMs: this.deps.clock.now(), shutdownTimeoutMs: this.deps.shutdownTimeoutMs, busy,
    });
    this.logOnce(actions);
    const starts = actions.filter((a) => a.kind === 'start').length;
    if (starts > 0) this.deps.logger.debug({ starts, busy: busy.size, listMs: this.deps.clock.now() - listFrom }, 'pass: starts planned');
    // A failed action is retried by the next periodic pass (resyncMs is the backoff), not at once.
    const results = await applyActions(actions, { ...this.deps, shutdowns: this.shutdowns, starts: this.starts });
    this.deps.onObserved?.(desired, this.observed);
    return { actions, results };
  }

  private noteSkip(error: string): PassReport {
    if (!this.logged.has('zk-down')) this.deps.logger.warn(error);
    this.logged.add('zk-down');
    return { actions: [], results: [], error };
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
      const known = new Set(this.store.snapshot().keys());
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
