import type { Clock, Logger } from '@pvc/runtime';
import { ZkError } from '../errors.js';
import type { SessionEvents, SessionState } from '../types.js';
import { Emitter } from './emitter.js';
import type { SessionHandle, SessionOpener } from './session.js';

/** Options of the session manager. */
export interface SessionManagerOptions {
  clock: Clock;
  logger?: Logger | undefined;
  /**
   * Declare the session expired ourselves when the connection stays down longer than the
   * negotiated session timeout (default true). Zookeeper only tells a client about expiry when it
   * reconnects; until then a partitioned lock holder would go on believing it holds its locks
   * although the server has already expired the session and granted them to someone else.
   */
  localExpiry?: boolean;
}

/**
 * Owns the current {@link SessionHandle} and the session state machine:
 * connecting → connected ⇄ suspended → expired → connected (new session) … → closed.
 * An expired session is replaced by a new one at once; `expired` is emitted before the new
 * session's `connected` (newSession: true), so lock holders learn they lost their locks first.
 */
export class SessionManager {
  readonly events: Emitter<SessionEvents>;
  private handle: SessionHandle;
  private current: SessionState = 'connecting';
  private hadConnection = false;
  private expiryTimer: AbortController | undefined;

  constructor(
    private readonly open: SessionOpener,
    private readonly opts: SessionManagerOptions,
  ) {
    this.events = new Emitter<SessionEvents>(opts.logger);
    this.handle = this.openHandle();
  }

  get state(): SessionState {
    return this.current;
  }

  get sessionId(): string | undefined {
    return this.handle.sessionId;
  }

  /** The handle calls must go to now. Throws CLOSED after `close()`. */
  active(): SessionHandle {
    if (this.current === 'closed') throw new ZkError('CLOSED', 'the ZK client is closed');
    return this.handle;
  }

  /** True when `h` is still the live handle (events from older handles are ignored). */
  isCurrent(h: SessionHandle): boolean {
    return h === this.handle && this.current !== 'closed';
  }

  /** Forces the current session to be treated as expired (used by local expiry and tests). */
  expire(reason: string): void {
    if (this.current === 'closed' || this.current === 'expired') return;
    const old = this.handle;
    const sessionId = old.sessionId ?? '';
    this.cancelExpiryTimer();
    this.current = 'expired';
    this.hadConnection = false;
    this.opts.logger?.warn({ sessionId, reason }, 'zk session expired');
    old.abandon();
    this.handle = this.openHandle();
    this.events.emit('expired', { sessionId, reason });
  }

  /** Ends the session and stops all events. */
  async close(): Promise<void> {
    if (this.current === 'closed') return;
    this.cancelExpiryTimer();
    this.current = 'closed';
    this.events.emit('closed', {});
    this.events.clear();
    await this.handle.close();
  }

  private openHandle(): SessionHandle {
    // The listener only fires asynchronously, after `h` is assigned and installed as the handle.
    const mine = (): boolean => h === this.handle && this.current !== 'closed';
    const h: SessionHandle = this.open({
      connected: () => {
        if (mine()) this.onConnected();
      },
      disconnected: () => {
        if (mine()) this.onDisconnected();
      },
      expired: (reason) => {
        if (mine()) this.expire(reason);
      },
    });
    return h;
  }

  private onConnected(): void {
    this.cancelExpiryTimer();
    const newSession = !this.hadConnection;
    this.hadConnection = true;
    this.current = 'connected';
    const sessionId = this.handle.sessionId ?? '';
    this.opts.logger?.info({ sessionId, newSession }, 'zk connected');
    this.events.emit('connected', { sessionId, newSession });
  }

  private onDisconnected(): void {
    if (this.current !== 'connected') return;
    this.current = 'suspended';
    const sessionId = this.handle.sessionId ?? '';
    this.opts.logger?.warn({ sessionId }, 'zk connection lost; session suspended');
    this.events.emit('suspended', { sessionId });
    if (this.opts.localExpiry !== false) this.startExpiryTimer(this.handle);
  }

  private startExpiryTimer(h: SessionHandle): void {
    this.cancelExpiryTimer();
    const ac = new AbortController();
    this.expiryTimer = ac;
    this.opts.clock.sleep(h.timeoutMs, ac.signal).then(
      () => {
        if (this.expiryTimer === ac && this.isCurrent(h) && this.current === 'suspended') {
          this.expire(`no connection for the session timeout (${h.timeoutMs} ms)`);
        }
      },
      () => undefined,
    );
  }

  private cancelExpiryTimer(): void {
    this.expiryTimer?.abort();
    this.expiryTimer = undefined;
  }
}
