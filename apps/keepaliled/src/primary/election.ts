import type { Backoff, Clock, Logger, WorkOutcome, WorkRun, WorkState } from '@pvc/runtime';
import { describeError, WorkQueue, untilAborted } from '@pvc/runtime';
import {
  clusterKeys, createLock, isZkError, locks, nodeKeys, pair, readKey, readKeys, readKeyWithStat, watchKey,
  type DaemonState, type RouterState, type Unsubscribe, type WritePair, type ZkClient,
} from '@pvc/zk';
import type { EventSink } from '../model.js';
import type { Peers } from '../ports.js';
import { DutiesNotConfirmedError, dutiesOffVerdict, switchDutiesOff, UNCONFIRMED_RETRY_PAUSE_MS, type DutiesOffVerdict } from './duties-off.js';

export interface ElectionDeps {
  self: string;
  coordinators: readonly string[];
  zk: ZkClient;
  clock: Clock;
  logger: Logger;
  events: EventSink;
  peers: Peers;
  /** Written to `/config` keys while primary (the original's primary keepalive duty). */
  primaryKeys: () => WritePair[];
  /** Whether this node may contend (its daemon state is `run`). */
  mayContend: () => boolean;
  /** How long we have not seen a node's keepalive change (the liveness tracker). */
  silentForMs?: (node: string) => number | undefined;
  /**
   * How long a cut-off primary may keep its duties before its own session expires and it drops
   * them (its ZK session timeout plus a margin). A takeover from an old primary that was declared
   * dead but not confirmed off waits until that much time has passed since it was last seen.
   */
  deadPrimaryGraceMs?: number;
  /**
   * The primary's lease (issue 11 item 4): how long ago our own last keepalive write was
   * acknowledged, and the most that may be while we keep the duties. A primary cut off from ZK,
   * or on a server that lost quorum, drops its duties (floating IPs) once its keepalive is that
   * old, before another coordinator's takeover may begin (`deadPrimaryGraceMs` after it was last
   * seen) — without waiting to learn that its session expired, which it learns later than that.
   * Absent: no lease (only session expiry drops the duties).
   */
  lease?: { readonly ownSilentForMs: () => number; readonly ms: number };
  /**
   * While primary, the duties are asked for again this often (a no-op for a service already
   * primary): a netd or cephd that restarted starts secondary and would otherwise run no duty
   * (no floating address) until the next handover. Absent: never re-asserted.
   */
  reassertEveryMs?: number;
}

/**
 * The lease of a primary ({@link ElectionDeps.lease}): the others' takeover waits until the old
 * primary has been silent for `sessionTimeoutMs + intervalMs` (deadPrimaryGraceMs); the primary
 * drops its duties `margin` before that, counted from its own last acknowledged keepalive (which
 * is no later than when the others saw it). The margin — an interval, at least 1 s and at most
 * 2 s — covers the switch-off itself (tens of ms) and clock steps; the lease stays longer than an
 * interval plus the write's own time, so a healthy primary never drops its duties between two
 * keepalives.
 */
export function primaryLeaseMs(sessionTimeoutMs: number, intervalMs: number): number {
  const margin = Math.min(2_000, Math.max(1_000, intervalMs));
  return Math.max(sessionTimeoutMs + intervalMs - margin, 2 * intervalMs);
}

/** How often the lease is looked at: a fraction of it, 50–250 ms. */
const leaseCheckMs = (leaseMs: number): number => Math.min(250, Math.max(50, Math.floor(leaseMs / 40)));

/**
 * A takeover waiting for another coordinator to stop its duties looks again this often even with
 * no event: time alone can end the wait (a dead primary's grace, see `busyOthers`).
 */
export const TAKEOVER_RECHECK_MS = 500;

/**
 * Retries of a failed election pass (ZK errors, duties that did not start): 0.5, 1, 2, 2 … s. The
 * cap stays well under a keepalive interval (the cluster's own pace: a dead primary is noticed
 * after several intervals), so a failure that clears slows a handover by at most 2 s; ZK coming
 * back (`connected`) ends the backoff at once. Unconfirmed duties wait {@link UNCONFIRMED_RETRY_PAUSE_MS}.
 */
export const ELECTION_BACKOFF: Backoff = Object.freeze({ initialMs: 500, maxMs: 2_000 });

/** The queue's one key: the election is one level-based pass over all of its keys. */
const ELECTION = 'election';

/** `undefined` states are absent, empty or unknown (an unknown value is logged by the key reader). */
interface Snapshot {
  primary: string;
  version: number;
  /** Our own routerstate as ZK has it. */
  mine: RouterState | undefined;
  others: Map<string, { router: RouterState | undefined; daemon: DaemonState | undefined }>;
}

/** Router states in which a coordinator's primary duties may be on. */
function isDutyState(router: RouterState | undefined): boolean {
  return router === 'primary' || router === 'relinquish' || router === 'takeover';
}

/**
 * A holder in one of these daemon states no longer holds the role. Unknown counts as gone (as an
 * absent key always did): a claim is safe because the takeover then waits for the holder's
 * routerstate to leave primary/relinquish/takeover (see `busyOthers`).
 */
function holderGone(daemon: DaemonState | undefined): boolean {
  return daemon === undefined || daemon === 'stop' || daemon === 'fenced';
}

/**
 * Primary coordinator election and the lock-step handover, on `/config/primary_node`.
 *
 * Level-based: every relevant change (primary_node, any coordinator's router or daemon state, a
 * ZK reconnect) adds the one key of a {@link WorkQueue}, whose passes re-read everything and act,
 * so no event ordering matters. A pass that fails is retried with a growing delay
 * ({@link ELECTION_BACKOFF}; unconfirmed duties after {@link UNCONFIRMED_RETRY_PAUSE_MS}), logged
 * once per change of reason by the queue.
 * - `none` (or naming a coordinator that is stopped, fenced or gone): `run` secondaries contend
 *   under the election Lock, writing themselves only if the key's version is unchanged.
 * - names us while we are secondary: `takeover` — our duties start only after every other
 *   coordinator has left `primary`/`relinquish`/`takeover` (or is dead/fenced/stopped), then
 *   `primary`. While it waits, the pass ends and the queue runs it again on the next change or
 *   after {@link TAKEOVER_RECHECK_MS} (`takeover` is written once). Names someone else while we are primary: `relinquish` — duties stop, `secondary`.
 * - ZK session expired while primary, or our keepalive older than the lease: duties stop at once
 *   (others may elect a new primary).
 *
 * Safety invariant: `secondary` is written only once the duties are confirmed stopped, or the
 * service that failed is not running (see `duties-off.ts`). Duties not confirmed stopped keep us in
 * `relinquish` — other coordinators' takeovers wait — and every pass tries again until they are.
 */
export class PrimaryElection {
  private router: RouterState = 'secondary';
  private readonly queue: WorkQueue<typeof ELECTION>;
  private skipVersion = -1;
  /** The coordinators a waiting takeover last logged it waits for (logged when that changes). */
  private waitingFor = '';
  private stopping = false;
  /** Why the current relinquish began (sent with each retry), and the switch-off in progress (one at a time). */
  private relinquishReason = '';
  private switchingOff: Promise<DutiesOffVerdict | undefined> | undefined;
  /** A re-assertion of the duties in flight: a switch-off waits for it, so its `on` never lands after the `off`. */
  private reasserting: Promise<void> | undefined;
  private reassertFailing = false;
  /** Our keepalive is older than the lease: no takeover, no claim. */
  private leaseOut = false;

  constructor(private readonly deps: ElectionDeps) {
    this.queue = new WorkQueue({
      name: 'primary election', clock: deps.clock, logger: deps.logger, backoff: ELECTION_BACKOFF,
      describe: () => ({}), work: (_key, run) => this.pass(run),
    });
  }

  get routerState(): RouterState {
    return this.router;
  }

  /** Runs until `signal` aborts (then call {@link stepDown}). Not restartable. */
  async run(signal: AbortSignal): Promise<void> {
    const unsubs = this.watchAll();
    const lease = this.deps.lease;
    if (lease) unsubs.push(this.deps.clock.every(leaseCheckMs(lease.ms), () => this.checkLease(lease), signal));
    const every = this.deps.reassertEveryMs;
    if (every !== undefined) unsubs.push(this.deps.clock.every(every, () => this.reassert(every, signal), signal));
    try {
      await untilAborted(signal);
    } finally {
      for (const u of unsubs) u();
      await this.queue.stop();
    }
  }

  /** Where the election's queue is (`backoff`: a failed pass waits to be retried). For tests and status. */
  get passState(): WorkState {
    return this.queue.state(ELECTION);
  }

  /** On shutdown: stop duties (bounded), become secondary, hand the role on. Duties not confirmed stopped leave `relinquish`. */
  async stepDown(): Promise<void> {
    this.stopping = true;
    if (!isDutyState(this.router)) return;
    await this.relinquish('shutdown');
    const { zk, self, logger } = this.deps;
    const current = await readKey(zk, clusterKeys.primaryNode, { logger }).catch(() => undefined);
    const [path, none] = pair(clusterKeys.primaryNode, 'none');
    if (current === self) await zk.set(path, none).catch(() => undefined);
  }

  private markDirty(reason: string): void {
    this.queue.add(ELECTION, reason);
  }

  /** One pass ({@link reconcile}) as the queue sees it. */
  private async pass(run: WorkRun): Promise<WorkOutcome> {
    try {
      const againInMs = await this.reconcile(run.signal);
      return againInMs === undefined ? { kind: 'done' } : { kind: 'done', againInMs };
    } catch (err) {
      // Unconfirmed duties were logged (as an error) where they failed; they are asked again after a pause.
      if (err instanceof DutiesNotConfirmedError) return { kind: 'retry', reason: err.message, afterMs: UNCONFIRMED_RETRY_PAUSE_MS };
      return { kind: 'retry', reason: describeError(err) };
    }
  }

  private watchAll(): Unsubscribe[] {
    const { zk, coordinators, self, logger } = this.deps;
    const mark = (reason: string) => (): void => this.markDirty(reason);
    const unsubs = [watchKey(zk, clusterKeys.primaryNode, mark('primary_node'), logger), zk.on('connected', () => this.reconnected())];
    unsubs.push(zk.on('expired', () => void this.dropUnasked('ZK session expired')));
    for (const c of coordinators) {
      if (c === self) continue;
      const k = nodeKeys(c);
      unsubs.push(watchKey(zk, k.routerState, mark(`${c} routerstate`), logger), watchKey(zk, k.daemonState, mark(`${c} daemonstate`), logger));
    }
    return unsubs;
  }

  /**
   * ZK is back: a pass at once. A pass waiting out a failure (most likely ZK's) starts its streak
   * afresh instead of finishing its backoff — except unconfirmed duties, whose pause is about the
   * local services, not ZK.
   */
  private reconnected(): void {
    if (this.router !== 'relinquish') this.queue.forget(ELECTION);
    this.markDirty('ZK connected');
  }

  private async snapshot(): Promise<Snapshot> {
    const { zk, coordinators, self, logger } = this.deps;
    // An absent key is vacant with version -1 (no claim can be written against it).
    const p = (await readKeyWithStat(zk, clusterKeys.primaryNode, { logger })) ?? { value: 'none', stat: { version: -1 } };
    const mine = await readKey(zk, nodeKeys(self).routerState, { logger });
    const others: Snapshot['others'] = new Map();
    for (const c of coordinators) {
      if (c === self) continue;
      const k = nodeKeys(c);
      const [router, daemon] = await readKeys(zk, [k.routerState, k.daemonState], { logger });
      others.set(c, { router, daemon });
    }
    return { primary: p.value, version: p.stat.version, mine, others };
  }

  /** One pass; returns when to look again with no event (a waiting takeover), else undefined. */
  private async reconcile(signal: AbortSignal): Promise<number | undefined> {
    if (this.stopping) return undefined;
    // Duties not confirmed stopped are seen to first, with or without ZK (the call is local).
    if (this.router === 'relinquish') return this.relinquish(this.relinquishReason, signal);
    if (this.deps.zk.state !== 'connected') return undefined;
    const s = await this.snapshot();
    const { self } = this.deps;
    const wrote = s.mine !== this.router;
    if (wrote) {
      // E.g. we dropped our duties while cut off and ZK still says primary, or our `takeover` write
      // failed: put it right.
      await this.deps.zk.write([pair(nodeKeys(self).routerState, this.router)]);
    }
    if (this.leaseOut) return undefined; // no duties without a fresh keepalive; checkLease asks for a pass
    if (s.primary === self) {
      // From `takeover` too: a takeover that waits, or failed half-way (duties did not start), goes on.
      if (this.router === 'secondary' || this.router === 'takeover') return this.takeover(wrote ? undefined : s, signal);
      return undefined;
    }
    if (this.router === 'primary' || this.router === 'takeover') {
      this.skipVersion = s.version;
      return this.relinquish(`primary_node is ${s.primary}`, signal);
    }
    if (this.vacant(s) && s.version !== this.skipVersion && this.deps.mayContend()) await this.contend(s, signal);
    return undefined;
  }

  private vacant(s: Snapshot): boolean {
    if (s.primary === 'none' || s.primary === 'None') return true;
    const holder = s.others.get(s.primary);
    if (!holder) return !this.deps.coordinators.includes(s.primary);
    return holderGone(holder.daemon);
  }

  private async contend(s: Snapshot, signal: AbortSignal): Promise<void> {
    const { zk, clock, self, events, logger } = this.deps;
    const lock = createLock(zk, locks.primaryElection, { clock, identifier: self });
    if (!(await lock.acquire({ timeoutMs: 400, signal }))) return;
    try {
      const now = await readKeyWithStat(zk, clusterKeys.primaryNode, { logger }).catch(() => undefined);
      if (!now || now.stat.version !== s.version) return;
      const [path, data] = pair(clusterKeys.primaryNode, self);
      await zk.set(path, data, { version: s.version });
      events({ kind: 'primary-claimed', node: self, previous: s.primary });
    } catch (err) {
      if (!isZkError(err, 'BAD_VERSION')) throw err;
    } finally {
      await lock.release().catch(() => false);
    }
    this.markDirty('claimed');
  }

  /**
   * Coordinators whose duties may still be on: router primary/relinquish/takeover, unless fenced
   * (confirmed off) or stopped — or dead and silent for longer than it can keep its duties.
   */
  private busyOthers(s: Snapshot): string[] {
    const grace = this.deps.deadPrimaryGraceMs ?? 0;
    return [...s.others.entries()]
      .filter(([, o]) => isDutyState(o.router) && o.daemon !== 'fenced' && o.daemon !== 'stop')
      .filter(([name, o]) => o.daemon !== 'dead' || (this.deps.silentForMs?.(name) ?? Infinity) < grace)
      .map(([name]) => name);
  }

  /**
   * `takeover`, written once; then, on a snapshot read after ZK has it (`fresh`: the pass's own,
   * when ZK already had it), either the coordinators still busy — the pass ends and asks to run
   * again in {@link TAKEOVER_RECHECK_MS} — or our duties on and `primary`.
   */
  private async takeover(fresh: Snapshot | undefined, signal: AbortSignal): Promise<number | undefined> {
    let s = fresh;
    if (this.router !== 'takeover' || s?.mine !== 'takeover') {
      if (this.router !== 'takeover') await this.setRouter('takeover', 'primary_node names us');
      s = await this.snapshot();
      if (s.primary !== this.deps.self) return this.relinquish('primary_node changed during takeover', signal);
    }
    const busy = this.busyOthers(s);
    const waitingFor = busy.join(',');
    if (waitingFor !== this.waitingFor && busy.length > 0) this.deps.logger.info({ waitingFor: busy }, 'takeover waits for the old primary to stop its duties');
    this.waitingFor = waitingFor;
    if (busy.length > 0) return TAKEOVER_RECHECK_MS;
    await this.deps.peers.setPrimaryDuties(true, 'takeover', { deadlineMs: 30_000, signal });
    this.deps.events({ kind: 'primary-duties', node: this.deps.self, on: true, reason: 'takeover' });
    await this.deps.zk.write(this.deps.primaryKeys()).catch((err: unknown) =>
      this.deps.logger.warn({ err: describeError(err) }, 'could not write the primary-only /config keys'));
    await this.setRouter('primary', 'takeover complete');
    return undefined;
  }

  /**
   * `relinquish`, duties off, `secondary`. Duties not confirmed stopped: still `relinquish`, and the pass
   * fails so that the queue tries again (at shutdown it is left so). Cut by `signal`: left for stepDown.
   */
  private async relinquish(reason: string, signal?: AbortSignal): Promise<undefined> {
    if (this.router !== 'relinquish') {
      this.relinquishReason = reason;
      await this.setRouter('relinquish', reason);
    }
    const verdict = await this.dutiesOff(reason, signal);
    if (verdict === undefined) return undefined;
    if (verdict.router === 'secondary') {
      await this.setRouter('secondary', verdict.reason);
      return undefined;
    }
    if (!this.stopping) throw new DutiesNotConfirmedError(verdict.reason);
    return undefined;
  }

  /** While primary (and not switching off), asks the services for the duties again. */
  private reassert(everyMs: number, signal: AbortSignal): void {
    if (this.router !== 'primary' || this.stopping || this.switchingOff || this.reasserting || this.leaseOut) return;
    const { peers, logger } = this.deps;
    this.reasserting = peers.setPrimaryDuties(true, 'primary (re-asserted)', { deadlineMs: Math.min(everyMs, 5_000), signal }).then(
      () => {
        if (this.reassertFailing) logger.info('the primary duties are confirmed on again');
        this.reassertFailing = false;
      },
      (err: unknown) => {
        if (!this.reassertFailing && !signal.aborted) logger.warn({ err: describeError(err) }, 'the primary duties could not be re-asserted (a service down?); asking again every interval');
        this.reassertFailing = true;
      },
    ).finally(() => (this.reasserting = undefined));
  }

  /** Bounded switch-off (`duties-off.ts`), one at a time; `undefined` when `signal` cut it short. */
  private dutiesOff(reason: string, signal?: AbortSignal): Promise<DutiesOffVerdict | undefined> {
    const { peers, clock, logger, events, self } = this.deps;
    const pending = this.reasserting ?? Promise.resolve();
    this.switchingOff ??= pending.then(() => switchDutiesOff({ peers, clock, logger }, reason, signal)).then((r) => {
      if (r.kind === 'aborted') return undefined;
      if (r.kind === 'stopped') events({ kind: 'primary-duties', node: self, on: false, reason });
      return dutiesOffVerdict(r);
    }).finally(() => (this.switchingOff = undefined));
    return this.switchingOff;
  }

  /**
   * Our keepalive is older than the lease while we may hold the duties: drop them unasked. While
   * it stays older no takeover begins (see reconcile); when it is fresh again a pass is asked for.
   */
  private checkLease(lease: NonNullable<ElectionDeps['lease']>): void {
    const silentMs = lease.ownSilentForMs();
    const wasOut = this.leaseOut;
    this.leaseOut = silentMs >= lease.ms;
    if (wasOut && !this.leaseOut) {
      this.deps.logger.info({ silentMs }, 'keepalives acknowledged again: the primary lease holds');
      this.markDirty('lease holds again');
    }
    if (!this.leaseOut || this.stopping || (this.router !== 'primary' && this.router !== 'takeover')) return;
    void this.dropUnasked(`no keepalive acknowledged by ZK for ${silentMs} ms (lease ${lease.ms} ms)`);
  }

  /**
   * Duties off without a word from ZK (session expired, lease ran out): another node may be
   * elected. No setRouter: ZK cannot be written now; a later pass puts our routerstate right and,
   * if primary_node still names us, takes over again. Unconfirmed duties stay `relinquish` (a
   * pass retries).
   */
  private async dropUnasked(why: string): Promise<void> {
    if (this.router !== 'primary' && this.router !== 'takeover') return;
    this.deps.logger.error({ why }, 'stopping the primary duties unasked: another node may be elected');
    this.router = 'relinquish';
    this.relinquishReason = why;
    const verdict = await this.dutiesOff(why);
    if (verdict?.router === 'secondary') this.router = 'secondary';
    this.markDirty('duties dropped unasked');
  }

  private async setRouter(to: RouterState, reason: string): Promise<void> {
    const from = this.router;
    this.router = to;
    this.deps.events({ kind: 'router-state', node: this.deps.self, from, to, reason });
    await this.deps.zk.write([pair(nodeKeys(this.deps.self).routerState, to)]).catch((err: unknown) =>
      this.deps.logger.warn({ err: describeError(err), to }, 'could not write routerstate'));
  }
}
