import type { Clock, Logger } from '@pvc/runtime';
import { AbortedError, describeError } from '@pvc/runtime';
import type { EventSink } from './model.js';
import type { Peers, SelfReset } from './ports.js';

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
}

/**
 * Self-fencing (the original documented `suicide_intervals` but never implemented it): a node
 * that could not write its keepalive for `suicide_intervals` intervals stops its VMs and resets
 * itself, so that a fencer which cannot reach its BMC may safely restart those VMs elsewhere
 * (see the Fencer's failed-fence wait). Disabled when `suicide_intervals` is 0.
 *
 * Trade-off, documented: with suicide on, a total Zookeeper outage longer than the suicide window
 * resets every node (as Proxmox HA's watchdog does on quorum loss).
 */
export class SuicideWatch {
  private fired = false;

  constructor(private readonly deps: SuicideDeps) {}

  get triggered(): boolean {
    return this.fired;
  }

  async run(signal: AbortSignal): Promise<void> {
    const { suicideIntervals, intervalMs, clock } = this.deps;
    if (suicideIntervals <= 0) return;
    const limitMs = suicideIntervals * intervalMs;
    const step = Math.min(intervalMs, 1_000);
    while (!signal.aborted && !this.fired) {
      if (this.deps.silentForMs() >= limitMs) {
        await this.fire(this.deps.silentForMs());
        return;
      }
      await clock.sleep(step, signal).catch((err: unknown) => {
        if (!(err instanceof AbortedError)) throw err;
      });
    }
  }

  private async fire(silentMs: number): Promise<void> {
    this.fired = true;
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
