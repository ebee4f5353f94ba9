import type { Logger } from '@pvc/runtime';
import { isZkError } from '../errors.js';
import type { DataSnapshot } from '../types.js';
import type { RawWatcher, SessionHandle } from './session.js';

/** What a watch needs from the client core. */
export interface WatchHost {
  /** The live handle, or undefined when the client is closed. */
  handle(): SessionHandle | undefined;
  isCurrent(h: SessionHandle): boolean;
  /** Wraps a raw read in the client's default deadline. */
  bounded<T>(what: string, run: () => Promise<T>): Promise<T>;
  /** True while the session is connected. */
  connected(): boolean;
  /** Waits a little before retrying a read that failed while connected. */
  pause(): Promise<void>;
  logger?: Logger | undefined;
}

/**
 * A level-based, self-re-arming watch. Every trigger (a one-shot ZK notification, a reconnect, a
 * new session) schedules a fresh read that also re-registers the one-shot watch; the value handed
 * to the callback always comes from a read that started after the last trigger, so it is never
 * older than the last change we were told about. Triggers during a read or a slow callback are
 * coalesced into one more read.
 */
abstract class RearmingWatch<V> {
  private running = false;
  private again = false;
  private closed = false;
  /**
   * No read has succeeded since the watch began or since its last read failed: its one-shot
   * watch may not be registered on the server, so a reconnection must read it again. A watch
   * whose read succeeded is registered, and the server keeps it across a reconnection that keeps
   * the session (the client re-sends it with the last zxid it saw: SetWatches, so a change made
   * while disconnected fires it on reconnection).
   */
  private unarmed = true;
  /** One raw watcher per handle, so re-registering on the same session does not duplicate it. */
  private rawFor: { h: SessionHandle; fn: RawWatcher } | undefined;

  constructor(
    protected readonly path: string,
    private readonly deliver: (v: V) => void | Promise<void>,
    protected readonly host: WatchHost,
  ) {}

  /** Schedules a read-and-deliver (a no-op after `stop`). */
  trigger(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    void this.loop();
  }

  stop(): void {
    this.closed = true;
  }

  /** Whether a reconnection that keeps the session must trigger this watch (see `unarmed`). */
  get needsRearm(): boolean {
    return this.unarmed || this.running;
  }

  protected abstract read(h: SessionHandle, watcher: RawWatcher): Promise<V>;

  private watcherFor(h: SessionHandle): RawWatcher {
    if (this.rawFor?.h !== h) {
      const fn: RawWatcher = () => {
        if (this.host.isCurrent(h)) this.trigger();
      };
      this.rawFor = { h, fn };
    }
    return this.rawFor.fn;
  }

  private async loop(): Promise<void> {
    try {
      do {
        this.again = false;
        const h = this.host.handle();
        if (h === undefined || this.closed) return;
        let value: V;
        try {
          value = await this.host.bounded(`watch ${this.path}`, () => this.read(h, this.watcherFor(h)));
        } catch (err) {
          this.unarmed = true;
          // While disconnected, the next `connected` event triggers us again; while connected
          // (a slow server, an odd error) we retry after a pause so the watch never dies.
          if (!isZkError(err, 'CONNECTION_LOSS', 'SESSION_EXPIRED', 'OPERATION_TIMEOUT', 'CLOSED')) {
            this.host.logger?.warn({ err, path: this.path }, 'zk watch read failed');
          }
          if (this.host.connected() && !this.closed) {
            await this.host.pause();
            this.again = true;
          }
          continue;
        }
        if (this.closed || !this.host.isCurrent(h)) continue;
        this.unarmed = false;
        try {
          await this.deliver(value);
        } catch (err) {
          this.host.logger?.warn({ err, path: this.path }, 'zk watch callback threw');
        }
      } while (this.again && !this.closed);
    } finally {
      this.running = false;
    }
  }
}

/** Reads data (or absence), leaving a data or existence watch behind. */
export class DataWatch extends RearmingWatch<DataSnapshot | undefined> {
  protected read(h: SessionHandle, watcher: RawWatcher): Promise<DataSnapshot | undefined> {
    return readOrWatchAbsence(h, this.path, watcher, () => h.getData(this.path, watcher));
  }
}

/** Reads child names (or absence), leaving a children or existence watch behind. */
export class ChildrenWatch extends RearmingWatch<readonly string[] | undefined> {
  protected read(h: SessionHandle, watcher: RawWatcher): Promise<readonly string[] | undefined> {
    return readOrWatchAbsence(h, this.path, watcher, () => h.getChildren(this.path, watcher));
  }
}

/**
 * Reads with `get`; when the node is absent, leaves an existence watch instead and returns undefined
 * (reading again if it appeared in between), so an absent node is watched for creation.
 */
async function readOrWatchAbsence<T>(h: SessionHandle, path: string, watcher: RawWatcher, get: () => Promise<T>): Promise<T | undefined> {
  for (;;) {
    try {
      return await get();
    } catch (err) {
      if (!isZkError(err, 'NO_NODE')) throw err;
    }
    const stat = await h.exists(path, watcher);
    if (stat === undefined) return undefined;
  }
}
