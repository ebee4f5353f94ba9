import type { Clock, Logger } from '@pvc/runtime';
import { AbortedError, describeError } from '@pvc/runtime';
import { suicideStepMs } from './fence/rules.js';
import type { EventSink } from './model.js';
import type { Peers, SelfReset } from './ports.js';
import { describeVerdict, type OutageVerdict } from './witness/verdict.js';
import type { OutageCheck } from './witness/peer-check.js';

/**
 * The suicide watch's states. `watching`: keepalives are written (or the deadline is not reached).
 * `held`: the deadline passed but the outage is global — no reset, re-asked every interval.
 * `grace`: it was global and no longer is — a fresh suicide window for our keepalive, then ask
 * again. `fired`: VMs stopped and the node reset.
 */
export type SuicideState = 'watching' | 'held' | 'grace' | 'fired';

export interface SuicideDeps {
  self: string;
  clock: Clock;
  logger: Logger;
  events: EventSink;
  peers: Peers;
  reset: SelfReset;
  /** Milliseconds since this node last wrote a keepalive. */
  silentForMs: () => number;
  intervalMs: number;
  suicideIntervals: number;
  /** The peer check (our addition, `peer_check_port` ≠ 0). Absent: reset at the deadline, as before. */
  peerCheck?: OutageCheck;
}

/**
 * Self-fencing (the original documented `suicide_intervals` but never implemented it): a node
 * that could not write its keepalive for `suicide_intervals` intervals stops its VMs and resets
 * itself, so that a fencer which cannot reach its BMC may safely restart those VMs elsewhere
 * (see the Fencer's failed-fence wait). Disabled when `suicide_intervals` is 0.
 *
 * With the peer check, at the deadline the node first asks the coordinators (`witness/`). A global
 * outage (no ZK quorum: nobody can fence it or restart its VMs) holds the reset back, logged once
 * with what each coordinator said, and is re-asked every interval. When it is no longer global
 * while we are still cut off, the node gets one fresh suicide window to write a keepalive (ZK
 * sessions take a moment to come back; without it the end of an outage would reset nodes), then
 * asks once more and resets unless the outage is global again. A keepalive ends it all. Every
 * state change is one `suicide-watch` event with its reason. The delay this adds is bounded
 * (`peerCheckDelayMs` in `fence/rules.ts`) and added to the fencer's failed-fence wait.
 */
export class SuicideWatch {
  private current: SuicideState = 'watching';
  /** Clock ms of the next ask while `held`, or of the end of the fresh window while `grace`. */
  private nextAt = 0;

  constructor(private readonly deps: SuicideDeps) {}

  get triggered(): boolean {
    return this.current === 'fired';
  }

  get state(): SuicideState {
    return this.current;
  }

  private get limitMs(): number {
    return this.deps.suicideIntervals * this.deps.intervalMs;
  }

  async run(signal: AbortSignal): Promise<void> {
    if (this.deps.suicideIntervals <= 0) return;
    const step = suicideStepMs(this.deps.intervalMs);
    while (!signal.aborted && !this.triggered) {
      await this.tick(signal);
      if (this.triggered) return;
      await this.deps.clock.sleep(step, signal).catch((err: unknown) => {
        if (!(err instanceof AbortedError)) throw err;
      });
    }
  }

  /** One look at the keepalive's age; asks and acts when due. */
  private async tick(signal: AbortSignal): Promise<void> {
    const { clock, peerCheck } = this.deps;
    if (this.deps.silentForMs() < this.limitMs) {
      if (this.current !== 'watching') this.transition('watching', 'a keepalive was written again');
      return;
    }
    if (!peerCheck) return this.fire();
    if (this.current !== 'watching' && clock.now() < this.nextAt) return;
    const askedAt = clock.now();
    const verdict = await peerCheck.check(signal);
    if (signal.aborted || this.deps.silentForMs() < this.limitMs) return;
    this.decide(verdict, askedAt);
    if (this.current === 'fired') await this.fire();
  }

  /** The state after a verdict (`fired` is acted on by the caller). */
  private decide(verdict: OutageVerdict, askedAt: number): void {
    const summary = describeVerdict(verdict);
    if (verdict.global) {
      if (this.current !== 'held') this.transition('held', `global Zookeeper outage, not resetting: ${summary}`, verdict);
      this.nextAt = askedAt + this.deps.intervalMs;
      return;
    }
    if (this.current === 'held') {
      this.nextAt = this.deps.clock.now() + this.limitMs;
      this.transition('grace', `outage no longer global; resetting unless a keepalive is written within ${this.limitMs / 1000} s: ${summary}`, verdict);
      return;
    }
    this.transition('fired', `cut off and the outage is not global: ${summary}`, verdict);
  }

  private transition(to: SuicideState, reason: string, verdict?: OutageVerdict): void {
    const from = this.current;
    this.current = to;
    const fields = { from, to, silentMs: this.deps.silentForMs(), ...(verdict ? { confirmed: verdict.confirmed, needed: verdict.needed, answers: verdict.answers } : {}) };
    this.deps.logger.debug(fields, 'suicide watch state');
    this.deps.events({ kind: 'suicide-watch', node: this.deps.self, from, to, reason });
  }

  private async fire(): Promise<void> {
    this.current = 'fired';
    const silentMs = this.deps.silentForMs();
    const { logger, peers, self } = this.deps;
    logger.fatal({ silentMs }, 'no keepalive could be written for suicide_intervals: stopping every VM and resetting this node');
    let stopped = 0;
    try {
      const r = await peers.stopAllVms('suicide: cut off from the cluster', { deadlineMs: 5_000 });
      stopped = r.stopped.length;
      if (r.failed.length > 0) logger.error({ failed: r.failed }, 'some VMs could not be stopped; the reset ends them');
    } catch (err) {
      logger.error({ err: describeError(err) }, 'vmd did not stop the VMs; the reset ends them');
    }
    this.deps.events({ kind: 'suicide', node: self, silentMs, stopped });
    await this.deps.reset.reset(`no keepalive for ${Math.round(silentMs / 1000)} s`);
  }
}
