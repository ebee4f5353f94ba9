/**
 * The recovery retry: VMs that fence recovery could not place (`stop`, `node_autostart=True`,
 * the no-target `failedreason`) are placed and started as soon as a target fits, instead of
 * waiting for their dead node to return. Decisions are in `retry-plan.ts` (pure).
 *
 * Safety contracts:
 * - Runs on the primary coordinator only, and each pass holds the cluster fence lock: it never
 *   runs at the same time as a fence or a recovery (which plan on the same memory figures), and
 *   stops writing when the lock is lost or the ZK session is suspended.
 * - Only VMs of a node nothing can run on any more (`isRecoverable`: `fenced`, or `dead` past the
 *   reset wait with `failed_fence: migrate`, and `flushed`) are moved.
 * - Each move is one transaction with `check`s of the versions just read and re-checked: the VM's
 *   `node` (as recovery's move), `state`, `node_autostart`, `failedreason`, and the dead node's
 *   `daemonstate` and `domainstate`. If the node checked in, was readied, or anyone touched the
 *   VM meanwhile, nothing is written.
 * - Nothing while `/config/maintenance` is on (like fencing).
 *
 * Liveness: a pass when any node's daemon or domain state changes (a node became `run`/`ready`)
 * and at least every keepalive interval (memory that frees has no watch); at most one pass per
 * `minGapMs`. A pass with no recoverable node reads nothing; a pass starts no move after it has
 * held the fence lock for one interval (the rest is left to the next pass). The passes are the
 * runs of the one key of a {@link WorkQueue}: a pass that fails is retried after `minGapMs`,
 * doubling up to one interval, and logged once per change of reason.
 *
 * @module
 */
import type { Clock, WorkOutcome } from '@pvc/runtime';
import { describeError, mapLimit, WorkQueue, untilAborted } from '@pvc/runtime';
import {
  clusterKeys, domainKeys, isOneOf, nodeKeys, paths, readAllNodeFigures, readKey, readKeyIfExists, readKeys, readKeyWithStat,
  readVmFacts, type NodeFigures, type VmFacts, type ZkOp,
} from '@pvc/zk';
import type { KeepalivedEvent } from '../model.js';
import { READ_CONCURRENCY } from '../faults/facts.js';
import { underFenceLock } from './fence-lock.js';
import type { LivenessTracker } from './liveness.js';
import { moveVm, RUNNING_STATES, type RecoveryDeps } from './recovery.js';
import { isRecoverable, isWaitingVm, planRetries, recoverableNodes, type PendingVm, type RetryMove, type RetryRules } from './retry-plan.js';

/** Dependencies of the {@link RecoveryRetry}. */
export interface RecoveryRetryDeps extends RecoveryDeps {
  clock: Clock;
  liveness: Pick<LivenessTracker, 'nodes' | 'silentUnvouchedForMs' | 'onStateChange'>;
  /** Whether this node holds the primary duties now (asked before every pass and every move). */
  isPrimary: () => boolean;
  /** `keepalive_interval`: the longest time between two passes. */
  intervalMs: number;
  rules: RetryRules;
  /** Shortest time between two passes; default min(interval, 1 s). */
  minGapMs?: number;
}

/** How a pass ended. */
export type RetryOutcome = 'not-primary' | 'not-connected' | 'idle' | 'busy' | 'maintenance' | 'interrupted' | 'done';

/** What one pass did (for logs and tests). */
export interface RetryReport {
  outcome: RetryOutcome;
  /** Names of the VMs moved. */
  moved: string[];
  /** Names of the waiting VMs that still have no target. */
  left: string[];
}

interface VmRow {
  uuid: string;
  node: string;
  state: string | undefined;
}

const report = (outcome: RetryOutcome, moved: string[] = [], left: string[] = []): RetryReport => ({ outcome, moved, left });

/** The queue's one key: a pass plans every waiting VM of every recoverable node together. */
const RETRY = 'recovery-retry';

/** Places the VMs fence recovery left without a target (see module doc). */
export class RecoveryRetry {
  private readonly queue: WorkQueue<typeof RETRY>;
  private readonly gapMs: number;
  /** When the last pass began. */
  private lastStart = -Infinity;
  private inMaintenance = false;
  /** Waiting VMs already logged at info (uuid → reason), so a VM is not logged every interval. */
  private readonly announced = new Map<string, string>();
  /** The last `vm-left` reason per VM (RBD locks), so a failing lock flush is reported once. */
  private readonly leftReasons = new Map<string, string>();
  private readonly moveDeps: RecoveryDeps;

  constructor(private readonly deps: RecoveryRetryDeps) {
    this.moveDeps = { ...deps, events: (e) => this.emitOnce(e) };
    const { clock, logger, intervalMs } = deps;
    this.gapMs = deps.minGapMs ?? Math.min(intervalMs, 1_000);
    this.queue = new WorkQueue({
      name: 'recovery retry', clock, logger, describe: () => ({}),
      // A failed pass (ZK trouble, mostly) logged once, retried after the gap, at most every interval.
      backoff: { initialMs: this.gapMs, maxMs: Math.max(this.gapMs, intervalMs) },
      work: (_key, run) => this.paced(run.signal),
    });
  }

  /** Runs passes until `signal` aborts. Not restartable. */
  async run(signal: AbortSignal): Promise<void> {
    const off = this.deps.liveness.onStateChange(() => void this.queue.add(RETRY, 'node state changed'));
    this.queue.add(RETRY, 'start');
    try {
      await untilAborted(signal);
    } finally {
      off();
      await this.queue.stop();
    }
  }

  /**
   * A pass, at most one per `minGapMs` (a run sooner only asks to be run at the gap's end); the
   * next one at the latest an interval after this one began.
   */
  private async paced(signal: AbortSignal): Promise<WorkOutcome> {
    const { clock, intervalMs } = this.deps;
    const early = this.lastStart + this.gapMs - clock.now();
    if (early > 0) return { kind: 'done', againInMs: early };
    this.lastStart = clock.now();
    await this.pass(signal);
    return { kind: 'done', againInMs: Math.max(0, this.lastStart + intervalMs - clock.now()) };
  }

  /** One pass. Exposed for tests. */
  async pass(signal: AbortSignal): Promise<RetryReport> {
    if (!this.deps.isPrimary()) return report('not-primary');
    if (this.deps.zk.state !== 'connected') return report('not-connected');
    const recoverable = recoverableNodes(this.view(), this.deps.rules);
    if (recoverable.length === 0) {
      this.announced.clear();
      return report('idle');
    }
    const r = await underFenceLock(this.deps, signal, 500, (held) => this.retry(new Set(recoverable), held));
    if (r.kind === 'busy') return report('busy');
    if (r.kind === 'interrupted') {
      this.deps.logger.warn({ reason: describeError(r.reason) }, 'recovery retry interrupted; the next pass goes on');
      return report('interrupted');
    }
    return r.value;
  }

  private view(): { name: string; daemonState: string | undefined; domainState: string | undefined; silentMs: number | undefined }[] {
    return this.deps.liveness.nodes().map((n) => ({ ...n, silentMs: this.deps.liveness.silentUnvouchedForMs(n.name) }));
  }

  private async retry(recoverable: ReadonlySet<string>, signal: AbortSignal): Promise<RetryReport> {
    const { zk, logger, clock } = this.deps;
    const started = clock.now();
    if (await readKey(zk, clusterKeys.maintenance, { logger, signal })) {
      this.noteMaintenance(true);
      return report('maintenance');
    }
    this.noteMaintenance(false);
    const rows = await this.scan(signal);
    const candidates = rows.filter((r) => recoverable.has(r.node) && r.state === 'stop');
    const facts = await mapLimit(candidates, READ_CONCURRENCY, (r) => readVmFacts(zk, r.uuid, logger));
    const waiting = facts.filter((vm): vm is VmFacts => vm !== undefined && isWaitingVm(vm, recoverable));
    for (const uuid of this.announced.keys()) if (!waiting.some((vm) => vm.uuid === uuid)) this.announced.delete(uuid);
    if (waiting.length === 0) return report('done');
    const nodes = await readAllNodeFigures(zk, logger);
    const pending = await this.readPending(rows, nodes, signal);
    const selector = (await readKeyIfExists(zk, clusterKeys.migrationTargetSelector, { logger, signal })) ?? this.deps.defaultSelector;
    const plan = planRetries({ waiting, pending, nodes, selector });
    for (const { vm, reason } of plan.left) this.announce(vm, reason);
    const moved: string[] = [];
    const left = plan.left.map((l) => l.vm.name);
    for (const [i, move] of plan.moves.entries()) {
      signal.throwIfAborted();
      if (!this.deps.isPrimary()) break;
      // The fence lock is held: after one interval the rest waits for the next pass, so a fence
      // that is due waits at most about that long (RBD lock flushes can be slow).
      if (clock.now() - started >= this.deps.intervalMs) {
        left.push(...plan.moves.slice(i).map((m) => m.vm.name));
        break;
      }
      if (await this.apply(move, signal)) moved.push(move.vm.name);
    }
    return report('done', moved, left);
  }

  /** Every VM's `node` and `state` (two reads each, a bounded number at a time). */
  private async scan(signal: AbortSignal): Promise<VmRow[]> {
    const { zk, logger } = this.deps;
    const uuids = (await zk.children(paths.domains, { signal })).sort();
    return mapLimit(uuids, READ_CONCURRENCY, async (uuid) => {
      const d = domainKeys(uuid);
      const [node, state] = await readKeys(zk, [d.node, d.state], { logger, signal });
      return { uuid, node, state };
    });
  }

  /** VMs assigned to a possible target in a running state that its last keepalive did not list. */
  private async readPending(rows: readonly VmRow[], nodes: readonly NodeFigures[], signal: AbortSignal): Promise<PendingVm[]> {
    const { zk, logger } = this.deps;
    const targets = nodes.filter((n) => n.daemonState === 'run' && n.domainState === 'ready').map((n) => n.name);
    const running = new Map<string, Set<string>>();
    for (const t of targets) running.set(t, new Set(await readKey(zk, nodeKeys(t).runningDomains, { logger, signal })));
    const pending = rows.filter((r) => running.has(r.node) && isOneOf(RUNNING_STATES, r.state) && !running.get(r.node)?.has(r.uuid));
    const facts = await mapLimit(pending, READ_CONCURRENCY, (r) => readVmFacts(zk, r.uuid, logger));
    return facts.flatMap((vm) => (vm !== undefined && running.has(vm.node) ? [{ vm, node: vm.node }] : []));
  }

  /** Re-checks the VM and its dead node with fresh reads, then moves it guarded on every version read. */
  private async apply(move: RetryMove, signal: AbortSignal): Promise<boolean> {
    const checks = await this.recheck(move, signal);
    if (checks === undefined) {
      this.deps.logger.info({ vm: move.vm.name, node: move.from }, 'VM or its node changed since the plan; left for the next pass');
      return false;
    }
    const moved = await moveVm(this.moveDeps, move.vm, move.from, move.target, { checks, retried: true });
    if (moved) {
      this.announced.delete(move.vm.uuid);
      this.leftReasons.delete(move.vm.name);
    }
    return moved;
  }

  /** `check` ops of the keys the decision rests on, or undefined when it no longer holds. */
  private async recheck({ vm, from }: RetryMove, signal: AbortSignal): Promise<ZkOp[] | undefined> {
    const { zk, logger, liveness, rules } = this.deps;
    const d = domainKeys(vm.uuid);
    const k = nodeKeys(from);
    const o = { logger, signal };
    const [state, auto, reason, daemon, domain] = await Promise.all([
      readKeyWithStat(zk, d.state, o), readKeyWithStat(zk, d.nodeAutostart, o), readKeyWithStat(zk, d.failedReason, o),
      readKeyWithStat(zk, k.daemonState, o), readKeyWithStat(zk, k.domainState, o),
    ]);
    if (!state || !auto || !reason || !daemon || !domain) return undefined;
    const node = { name: from, daemonState: daemon.value, domainState: domain.value, silentMs: liveness.silentUnvouchedForMs(from) };
    if (!isRecoverable(node, rules)) return undefined;
    if (!isWaitingVm({ state: state.value, node: from, autostart: auto.value, failedReason: reason.value }, new Set([from]))) return undefined;
    const guarded: [string, number][] = [
      [d.state.path, state.stat.version], [d.nodeAutostart.path, auto.stat.version], [d.failedReason.path, reason.stat.version],
      [k.daemonState.path, daemon.stat.version], [k.domainState.path, domain.stat.version],
    ];
    return guarded.map(([path, version]) => ({ type: 'check', path, version }));
  }

  private announce(vm: VmFacts, reason: string): void {
    if (this.announced.has(vm.uuid)) {
      this.deps.logger.debug({ vm: vm.name, node: vm.node, reason }, 'VM still has no recovery target');
      return;
    }
    this.announced.set(vm.uuid, reason);
    this.deps.logger.info({ vm: vm.name, node: vm.node, reason }, 'VM has no recovery target yet; placement is retried when nodes change and every interval');
  }

  /** Passes events on; a `vm-left` (RBD locks not cleared) only when its reason changed. */
  private emitOnce(e: KeepalivedEvent): void {
    if (e.kind === 'vm-left') {
      if (this.leftReasons.get(e.vm) === e.reason) return;
      this.leftReasons.set(e.vm, e.reason);
    }
    this.deps.events(e);
  }

  private noteMaintenance(on: boolean): void {
    if (this.inMaintenance === on) return;
    this.inMaintenance = on;
    this.deps.logger.info(on ? 'maintenance is on: no recovery retry' : 'maintenance is off: recovery retry resumes');
  }
}
