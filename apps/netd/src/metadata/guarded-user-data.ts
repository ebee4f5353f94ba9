/**
 * The metadata API's view of its database: a small state machine over a {@link UserDataSource}.
 *
 * - `unknown` (before the first answer) and `up`: requests go to the database.
 * - A failure makes it `down`: one error line naming `coordinator.metadata.database` and why (never
 *   the password), then a probe ({@link UserDataSource.check}) again after a pause doubling from
 *   `retry.firstMs` to `retry.maxMs` until it answers (`up`, one info line). While `down` requests
 *   fail at once ({@link UserDataError}; the API answers 503) without waiting on the database.
 * - {@link GuardedUserData.start} probes once at once, so a bad database is named when the API
 *   starts, not at the first guest's request. {@link GuardedUserData.stop} ends the probing.
 *
 * @module
 */
import { describeError, retryUntilDone, type Clock, type Logger, type RetryPause } from '@pvc/runtime';
import { METADATA_DB_KEY, UserDataError, type UserDataFailure, type UserDataSource } from './user-data.js';

/** The states. */
export type DatabaseState =
  | { readonly kind: 'unknown' }
  | { readonly kind: 'up' }
  | { readonly kind: 'down'; readonly reason: UserDataFailure; readonly message: string };

/** Dependencies of {@link GuardedUserData}. */
export interface GuardedUserDataDeps {
  readonly source: UserDataSource;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Pause between probes while down (default 2 s doubling up to 60 s). */
  readonly retry?: RetryPause;
}

export class GuardedUserData {
  private state: DatabaseState = { kind: 'unknown' };
  /** The stop signal of the probe running now (one per start). */
  private probingFor: AbortSignal | undefined;
  private stopper = new AbortController();

  constructor(private readonly deps: GuardedUserDataDeps) {}

  /** The state now. */
  get current(): DatabaseState {
    return this.state;
  }

  /** Probes the database once now (in the background); a failure starts the retries. */
  start(): void {
    this.stopper = new AbortController();
    void this.probe();
  }

  /** Ends the probing (the pool stays; {@link close} releases it). */
  stop(): void {
    this.stopper.abort();
  }

  /** Releases the connections for good. */
  async close(): Promise<void> {
    this.stop();
    await this.deps.source.close();
  }

  /** The user-data of `profile` (null = none). Throws {@link UserDataError} while the database is down. */
  async forProfile(profile: string): Promise<string | null> {
    if (this.state.kind === 'down') throw new UserDataError(this.state.reason, this.state.message);
    try {
      const r = await this.deps.source.forProfile(profile);
      this.markUp();
      return r;
    } catch (err) {
      const e = err instanceof UserDataError ? err : new UserDataError('query-failed', `${METADATA_DB_KEY}: ${describeError(err)}`, err);
      this.markDown(e);
      throw e;
    }
  }

  private async probe(): Promise<void> {
    const signal = this.stopper.signal;
    if (this.probingFor === signal) return;
    this.probingFor = signal;
    try {
      await retryUntilDone(this.deps.clock, this.deps.retry ?? { firstMs: 2_000, maxMs: 60_000 }, async () => {
        try {
          await this.deps.source.check();
          this.markUp();
          return true;
        } catch (err) {
          if (signal.aborted) return true;
          const e = err instanceof UserDataError ? err : new UserDataError('query-failed', `${METADATA_DB_KEY}: ${describeError(err)}`, err);
          if (this.state.kind === 'down') this.deps.logger.debug({ key: METADATA_DB_KEY, reason: e.reason, err: e.message }, 'user-data database still not usable');
          else this.markDown(e, false);
          return false;
        }
      }, signal);
    } finally {
      if (this.probingFor === signal) this.probingFor = undefined;
    }
  }

  private markUp(): void {
    if (this.state.kind === 'up') return;
    const was = this.state.kind;
    this.state = { kind: 'up' };
    if (was === 'down') this.deps.logger.info({ key: METADATA_DB_KEY }, `${METADATA_DB_KEY}: user-data database usable again; serving user-data`);
    else this.deps.logger.info({ key: METADATA_DB_KEY }, `${METADATA_DB_KEY}: user-data database usable`);
  }

  private markDown(e: UserDataError, startProbe = true): void {
    if (this.state.kind === 'down') return;
    this.state = { kind: 'down', reason: e.reason, message: e.message };
    this.deps.logger.error({ key: METADATA_DB_KEY, reason: e.reason, err: e.message }, `${METADATA_DB_KEY}: user-data database not usable (${e.reason}); user-data requests answer 503 until it is back; trying again with backoff`);
    if (startProbe && !this.stopper.signal.aborted) void this.probe();
  }
}
