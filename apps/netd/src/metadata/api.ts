/**
 * The metadata API's life cycle as a primary duty (inventory §4.1 phase G, §7.5): started on
 * takeover, stopped on relinquish and at shutdown.
 *
 * Start never fails the takeover: the database is probed in the background (a bad
 * `coordinator.metadata.database` is logged naming the key and retried with backoff, user-data
 * answering 503 meanwhile), and when the address cannot be bound (the metadata IP missing on `lo`,
 * port 80 taken) the failure is logged and the listen retried with backoff until it works or the
 * duty stops — the rest of the primary's duties go on.
 *
 * @module
 */
import { describeError, retryUntilDone, type Clock, type Logger, type RetryPause } from '@pvc/runtime';
import type { GuardedUserData } from './guarded-user-data.js';
import type { HttpListener } from './http-server.js';

/** The states of the API. */
export type ApiState = 'stopped' | 'binding' | 'serving';

/** Dependencies of {@link MetadataApi}. */
export interface MetadataApiDeps {
  readonly listener: HttpListener;
  readonly userData: GuardedUserData;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Where it listens, for messages (`169.254.169.254:80`). */
  readonly where: string;
  /** Pause between listen attempts (default 1 s doubling up to 30 s). */
  readonly retry?: RetryPause;
}

export class MetadataApi {
  private state: ApiState = 'stopped';
  private stopper = new AbortController();
  private binding: Promise<void> | undefined;

  constructor(private readonly d: MetadataApiDeps) {}

  get current(): ApiState {
    return this.state;
  }

  /** Starts the database probe and the listener; resolves after the first listen attempt. */
  async start(): Promise<void> {
    if (this.state !== 'stopped') return;
    this.stopper = new AbortController();
    const signal = this.stopper.signal;
    this.d.userData.start();
    this.state = 'binding';
    let first = true;
    let firstDone!: () => void;
    const firstAttempt = new Promise<void>((r) => (firstDone = r));
    this.binding = retryUntilDone(this.d.clock, this.d.retry ?? { firstMs: 1_000, maxMs: 30_000 }, async () => {
      try {
        await this.d.listener.listen();
        if (signal.aborted) return true;
        this.state = 'serving';
        this.d.logger.info({ at: this.d.where }, `metadata API serving at ${this.d.where}`);
        return true;
      } catch (err) {
        const level = first ? 'error' : 'debug';
        this.d.logger[level]({ at: this.d.where, err: describeError(err) }, `metadata API cannot listen at ${this.d.where}; trying again with backoff`);
        return signal.aborted;
      } finally {
        if (first) firstDone();
        first = false;
      }
    }, signal);
    await firstAttempt;
  }

  /** Stops listening and probing; idempotent. */
  async stop(): Promise<void> {
    if (this.state === 'stopped') return;
    this.stopper.abort();
    this.d.userData.stop();
    await this.binding;
    await this.d.listener.close();
    this.state = 'stopped';
    this.d.logger.info({ at: this.d.where }, `metadata API stopped at ${this.d.where}`);
  }
}
