import type { Clock, Logger } from '@pvc/runtime';
import { AbortedError, describeError } from '@pvc/runtime';
import type { WitnessEndpoint, WitnessHandle, ZkReach } from '../ports.js';

/** Pause between two attempts to listen (the address may appear later, or the port be freed). */
export const WITNESS_RETRY_MS = 10_000;

export interface WitnessServerDeps {
  endpoint: WitnessEndpoint;
  /** This coordinator's reach, computed afresh for each ask (`localReach`). */
  answer: (signal: AbortSignal) => Promise<ZkReach>;
  clock: Clock;
  logger: Logger;
  retryMs?: number;
}

/**
 * Serves this coordinator's witness (the suicide peer check's answer) until `signal` aborts. A
 * failure to listen is logged once per episode and retried; meanwhile the other nodes count this
 * coordinator as not answering, which never holds a reset back (the safe direction).
 */
export class WitnessServer {
  constructor(private readonly deps: WitnessServerDeps) {}

  async run(signal: AbortSignal): Promise<void> {
    const { endpoint, clock, logger } = this.deps;
    const retryMs = this.deps.retryMs ?? WITNESS_RETRY_MS;
    let failing = false;
    while (!signal.aborted) {
      let handle: WitnessHandle;
      try {
        handle = await endpoint.serve(this.deps.answer);
      } catch (err) {
        if (!failing) logger.error({ err: describeError(err), retryMs }, 'cannot serve the suicide peer check: other nodes count this coordinator as not answering; retrying');
        failing = true;
        const aborted = await clock.sleep(retryMs, signal).then(() => false, (e: unknown) => {
          if (e instanceof AbortedError) return true;
          throw e;
        });
        if (aborted) return;
        continue;
      }
      logger.info({ address: handle.address }, 'serving the suicide peer check');
      await new Promise<void>((resolve) => {
        if (signal.aborted) resolve();
        else signal.addEventListener('abort', () => resolve(), { once: true });
      });
      await handle.close().catch((err: unknown) => logger.warn({ err: describeError(err) }, 'closing the suicide peer check failed'));
      return;
    }
  }
}
