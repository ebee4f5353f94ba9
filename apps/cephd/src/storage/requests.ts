/**
 * cephd's `storage-requests` primary duty: carries out the `pvc storage` requests written under
 * `/cmd/ceph` (ours; libs/zk storage-requests.ts), **one at a time, in the order they were made**
 * (their sequence numbers), each exactly once, and answers each.
 *
 * - A watch on `/cmd/ceph`'s children and a sweep every `sweepMs` start a pass (coalesced: one
 *   pass at a time, one more if asked meanwhile). A pass looks at every request in order.
 * - Unclaimed and younger than `unclaimedTtlMs`: claimed (`claim` + ephemeral `claim/live` in one
 *   transaction; a claim that loses the race is skipped), carried out, answered.
 * - Unclaimed and older: answered `expired` without running (no primary took it in time: nothing
 *   was done; better than running a change the requester gave up on long ago).
 * - Claimed with `live` present: another cephd is carrying it out (a handover overlap); left alone.
 * - Claimed without `live` and unanswered: its executor died part-way. It is never run again:
 *   answered `interrupted`, saying Ceph may hold part of it.
 * - Answered longer ago than `answeredTtlMs` (the requester did not delete it): deleted.
 * - An answer that could not be written (Zookeeper gone) is kept and written by a later pass.
 *
 * Stop: no new request is taken; the request in progress finishes (its Ceph steps are not cut
 * short — that would leave it half-made) and `stop()` waits for it up to `stopWaitMs`.
 *
 * @module
 */
import { CoalescingRunner, describeError, type Clock, type Logger } from '@pvc/runtime';
import type { PrimaryDuty } from '@pvc/rpc';
import {
  answerStorageRequest, claimStorageRequest, deleteStorageRequest, describeStorageRequest, readStorageRequest, readStorageRequestState,
  sortStorageRequests, STORAGE_REQUEST_ROOTS, type RequestState, type StorageAnswer, type Unsubscribe,
} from '@pvc/zk';
import { carryOut } from './carry-out.js';
import type { Outcome } from './execute.js';
import type { StorageIo } from './view.js';

/** Bounds of the request pipe. */
export interface RequestTiming {
  sweepMs: number;
  answeredTtlMs: number;
  unclaimedTtlMs: number;
  stopWaitMs: number;
}

export const DEFAULT_REQUEST_TIMING: RequestTiming = { sweepMs: 30_000, answeredTtlMs: 600_000, unclaimedTtlMs: 600_000, stopWaitMs: 3_000 };

/** Dependencies of {@link StorageRequests}. */
export interface StorageRequestsDeps {
  io: StorageIo;
  node: string;
  clock: Clock;
  logger: Logger;
  timing?: Partial<RequestTiming>;
}

/** The duty; see the module comment. */
export class StorageRequests {
  private readonly timing: RequestTiming;
  private readonly runner = new CoalescingRunner<void>(() => this.pass());
  private readonly unwritten = new Map<string, StorageAnswer>();
  private ids: readonly string[] = [];
  private active = false;
  private unwatch: Unsubscribe | undefined;
  private stopSweep: (() => void) | undefined;

  constructor(private readonly deps: StorageRequestsDeps) {
    this.timing = { ...DEFAULT_REQUEST_TIMING, ...deps.timing };
  }

  /** As a primary duty. */
  duty(): PrimaryDuty {
    return { name: 'storage-requests', start: () => this.start(), stop: () => this.stop() };
  }

  start(): Promise<void> {
    if (this.active) return Promise.resolve();
    this.active = true;
    this.unwatch = this.deps.io.zk.watchChildren(STORAGE_REQUEST_ROOTS.requests, (children) => {
      this.ids = children ?? [];
      this.kick('requests changed');
    });
    this.stopSweep = this.deps.clock.every(this.timing.sweepMs, () => this.kick('sweep'));
    this.deps.logger.info('storage requests: taking requests under /cmd/ceph');
    return Promise.resolve();
  }

  async stop(): Promise<void> {
    if (!this.active) return;
    this.active = false;
    this.unwatch?.();
    this.stopSweep?.();
    if (!this.runner.busy) return;
    const ac = new AbortController();
    const idle = this.runner.request('stop').then(() => true, () => true);
    const inTime = await Promise.race([idle, this.deps.clock.sleep(this.timing.stopWaitMs, ac.signal).then(() => false, () => false)]);
    ac.abort();
    if (!inTime) this.deps.logger.warn({ waitedMs: this.timing.stopWaitMs }, 'storage requests: a request is still in progress; it finishes and answers on its own');
  }

  private kick(reason: string): void {
    if (!this.active) return;
    this.runner.request(reason).catch((err: unknown) => this.deps.logger.error({ err: describeError(err) }, 'storage requests: pass failed'));
  }

  private async pass(): Promise<void> {
    for (const id of this.unwritten.keys()) if (!this.ids.includes(id)) this.unwritten.delete(id);
    for (const id of sortStorageRequests(this.ids)) {
      if (!this.active) return;
      try {
        await this.handle(id);
      } catch (err) {
        this.deps.logger.warn({ request: id, err: describeError(err) }, 'storage requests: could not look at a request; retried at the next pass');
      }
    }
  }

  private async handle(id: string): Promise<void> {
    const unwritten = this.unwritten.get(id);
    if (unwritten) return this.answer(id, unwritten);
    const state = await readStorageRequestState(this.deps.io.zk, id);
    if (!state) return;
    const now = this.deps.clock.now();
    if (state.answer) {
      if (now - state.answer.ctime >= this.timing.answeredTtlMs) await this.collect(id, 'answered and not collected by its requester');
      return;
    }
    if (state.claim !== undefined) return state.live ? undefined : this.interrupted(id, state);
    if (now - state.ctime >= this.timing.unclaimedTtlMs) {
      return this.finish(id, { ok: false, message: `expired: no cephd on a primary took it within ${Math.round(this.timing.unclaimedTtlMs / 1000)} s; nothing was done` });
    }
    if (!(await claimStorageRequest(this.deps.io.zk, id, { node: this.deps.node, startedMs: now }))) return;
    await this.run(id, now);
  }

  private async run(id: string, started: number): Promise<void> {
    const { io, logger, clock } = this.deps;
    const read = await readStorageRequest(io.zk, id);
    if (!read) return;
    const what = read.ok ? describeStorageRequest(read.record.request) : '(unreadable)';
    logger.info({ request: id, what, client: read.ok ? read.record.client : undefined }, `storage request ${id}: ${what}`);
    const outcome = await carryOut(io, id, read);
    logger[outcome.ok ? 'info' : 'warn']({ request: id, what, ok: outcome.ok, message: outcome.message, ms: clock.now() - started }, `storage request ${id} ${outcome.ok ? 'done' : 'failed'}`);
    await this.finish(id, outcome);
  }

  private interrupted(id: string, state: RequestState): Promise<void> {
    const by = state.claim === 'unreadable' || state.claim === undefined ? 'a cephd' : `cephd on ${state.claim.node}`;
    const message = `interrupted: ${by} started it and stopped before answering (its session ended); it is not run again. `
      + 'Ceph may hold part of it: check with pvc storage pool/volume list and repeat or undo by hand';
    this.deps.logger.warn({ request: id, by }, `storage request ${id}: ${message}`);
    return this.finish(id, { ok: false, message });
  }

  private finish(id: string, outcome: Outcome): Promise<void> {
    return this.answer(id, { ...outcome, node: this.deps.node, finishedMs: this.deps.clock.now() });
  }

  private async answer(id: string, answer: StorageAnswer): Promise<void> {
    try {
      const r = await answerStorageRequest(this.deps.io.zk, id, answer);
      this.unwritten.delete(id);
      if (r !== 'written') this.deps.logger.warn({ request: id, result: r }, `storage request ${id}: answer not written (${r === 'gone' ? 'the request was deleted' : 'already answered'})`);
    } catch (err) {
      this.unwritten.set(id, answer);
      this.deps.logger.warn({ request: id, err: describeError(err) }, `storage request ${id}: answer not written yet; retried at the next pass`);
    }
  }

  private async collect(id: string, why: string): Promise<void> {
    await deleteStorageRequest(this.deps.io.zk, id);
    this.deps.logger.info({ request: id }, `storage request ${id} deleted: ${why}`);
  }
}
