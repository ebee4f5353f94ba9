import type { Clock, Logger } from '@pvc/runtime';
import { ZkClientCore } from '../core/client.js';
import type { RawWatchEvent } from '../core/session.js';
import type { ZkErrorCode } from '../errors.js';
import type { ZkClient } from '../types.js';
import { FakeSession, type FakeServerPort } from './fake-session.js';
import { FakeTree } from './fake-tree.js';
import { FakeZkStats } from './fake-stats.js';
import { FakeWatchIndex } from './fake-watch-index.js';

/** Options of a fake client (the same knobs as the real one, minus the network). */
export interface FakeConnectOptions {
  sessionTimeoutMs?: number;
  opTimeoutMs?: number;
  localExpiry?: boolean;
  logger?: Logger;
}

/** A failure injected into upcoming writes (create/set/delete/multi). */
export interface WriteFailure {
  /** Error code to report; default CONNECTION_LOSS. */
  code?: ZkErrorCode;
  /** How many writes fail; default 1. */
  count?: number;
  /** Apply the write anyway and only lose the answer (the ambiguous case); default false. */
  applied?: boolean;
}

/** A session id or a client whose current session is meant. */
export type SessionRef = string | ZkClient;

/**
 * An in-memory Zookeeper server for unit tests, with the real client's semantics (both are built
 * on the same core): versions, cversion-based sequence suffixes, atomic multi-ops, ephemeral nodes
 * per session, one-shot watches re-armed by the core, session expiry. Time comes from the given
 * Clock, so it runs in virtual time.
 *
 * Knobs: {@link failNextWrite}, {@link partition}/{@link heal} (a client cut off the network),
 * {@link disconnect}/{@link reconnect} (one session's connection drops: the server
 * expires the session after its timeout, the client's local expiry fires too),
 * {@link expireSession} (at once), {@link stop}/{@link start} (server down: nothing expires while
 * it is down, like a real restart).
 *
 * Not modelled: ACLs, quotas, chroot, the 1 MB data limit, persistent/TTL/container nodes,
 * server-side request latency or ordering across sessions beyond FIFO microtasks.
 */
export class FakeZkServer implements FakeServerPort {
  readonly tree: FakeTree;
  /** Requests by kind and watch notifications delivered, since the server was made. */
  readonly stats = new FakeZkStats();
  /** Who watches which path, and which sessions are offline (see {@link dispatch}). */
  readonly watches = new FakeWatchIndex<FakeSession>();
  private readonly sessions = new Map<string, FakeSession>();
  private readonly expiryTimers = new Map<string, AbortController>();
  private readonly failures: { code: ZkErrorCode; applied: boolean }[] = [];
  private counter = 0;
  private up = true;
  /** Each client's identity token (sessions are opened inside the client's constructor). */
  private readonly tokens = new WeakMap<ZkClient, object>();
  private readonly partitioned = new WeakSet<object>();
  private readonly owners = new Map<string, object>();

  constructor(private readonly opts: { clock: Clock }) {
    this.tree = new FakeTree(opts.clock);
  }

  /** Connects a new client (its own session) and waits for the session. */
  async connect(opts: FakeConnectOptions = {}): Promise<ZkClient> {
    const client = this.client(opts);
    await client.waitConnected({ timeoutMs: Infinity });
    return client;
  }

  /** Creates a client without waiting for its session (state `connecting` until connected). */
  client(opts: FakeConnectOptions = {}): ZkClient {
    const timeoutMs = opts.sessionTimeoutMs ?? 10_000;
    const token = {};
    const client: ZkClient = new ZkClientCore(
      (listener) => {
        const order = ++this.counter;
        const id = (0xfa4e_0000_0000_0000n + BigInt(order)).toString(16).padStart(16, '0');
        const s = new FakeSession(id, order, timeoutMs, this, listener);
        this.sessions.set(id, s);
        this.owners.set(id, token);
        queueMicrotask(() => this.attach(s));
        return s;
      },
      { clock: this.opts.clock, logger: opts.logger, opTimeoutMs: opts.opTimeoutMs, localExpiry: opts.localExpiry },
    );
    this.tokens.set(client, token);
    return client;
  }

  /**
   * Cuts a client off the network: its session is disconnected (and expires after its timeout)
   * and no session of this client, old or new, can connect until {@link heal}. Unlike
   * {@link disconnect}, a client that gives up its session and opens a new one stays cut off.
   */
  partition(client: ZkClient): void {
    const token = this.tokens.get(client);
    if (token) this.partitioned.add(token);
    this.disconnect(client);
  }

  /** Ends a {@link partition}: the client's live sessions reconnect. */
  heal(client: ZkClient): void {
    const token = this.tokens.get(client);
    if (!token) return;
    this.partitioned.delete(token);
    for (const [id, owner] of this.owners) {
      const s = this.sessions.get(id);
      if (owner === token && s) this.attach(s);
    }
  }

  /** The next `count` writes fail with `code` (CONNECTION_LOSS by default). */
  failNextWrite(f: WriteFailure = {}): void {
    for (let i = 0; i < (f.count ?? 1); i++) this.failures.push({ code: f.code ?? 'CONNECTION_LOSS', applied: f.applied ?? false });
  }

  /** Cuts one session's connection; the server expires it after its timeout unless it returns. */
  disconnect(ref: SessionRef): void {
    const s = this.session(ref);
    if (!s?.connected) return;
    s.connected = false;
    s.listener.disconnected();
    this.armExpiry(s);
  }

  /** Restores one session's connection (the client learns about an expiry at this point). */
  reconnect(ref: SessionRef): void {
    const s = this.session(ref);
    if (s) this.attach(s);
  }

  /** Expires a session now, as the server does after its timeout (or the classic close trick). */
  expireSession(ref: SessionRef): void {
    const s = this.session(ref);
    if (!s?.alive) return;
    const wasConnected = s.connected;
    this.end(s);
    // A connected client hears it at once (the server drops the connection, the reconnect is
    // refused as expired); a partitioned one only when it reconnects.
    if (wasConnected && !s.abandonedByClient) {
      s.listener.disconnected();
      s.listener.expired('the server expired the session');
    }
  }

  /** Server down: every connection drops; no session expires while it is down. */
  stop(): void {
    this.up = false;
    for (const s of this.sessions.values()) {
      this.cancelExpiry(s.sessionId);
      if (s.connected) {
        s.connected = false;
        if (!s.abandonedByClient) s.listener.disconnected();
      }
    }
  }

  /** Server up again: sessions get a fresh timeout and their clients reconnect. */
  start(): void {
    this.up = true;
    for (const s of [...this.sessions.values()]) {
      if (s.abandonedByClient) this.armExpiry(s);
      else this.attach(s);
    }
  }

  /** Ids of the live sessions. */
  sessionIds(): string[] {
    return [...this.sessions.values()].filter((s) => s.alive).map((s) => s.sessionId);
  }

  /** Every node below `root` with its data (for assertions). */
  dump(root = '/'): Record<string, string> {
    return this.tree.dump(root);
  }

  /**
   * Hands the events of one applied change to the sessions that watch their paths or are offline
   * (they buffer it), in session creation order; the others could not react to it.
   */
  dispatch(events: readonly RawWatchEvent[]): void {
    this.watches.dispatch(events);
  }

  takeWriteFailure(): { code: ZkErrorCode; applied: boolean } | undefined {
    return this.failures.shift();
  }

  abandoned(s: FakeSession): void {
    if (!s.alive) {
      this.sessions.delete(s.sessionId);
      this.owners.delete(s.sessionId);
      return;
    }
    // The client dropped the handle; the server only learns when the session times out.
    s.connected = false;
    if (!this.expiryTimers.has(s.sessionId) && this.up) this.armExpiry(s);
  }

  bounce(s: FakeSession): void {
    this.disconnect(s.sessionId);
    queueMicrotask(() => this.attach(s));
  }

  closed(s: FakeSession): void {
    if (s.alive) this.end(s);
  }

  private attach(s: FakeSession): void {
    if (!this.up || s.abandonedByClient || s.connected) return;
    const owner = this.owners.get(s.sessionId);
    if (owner !== undefined && this.partitioned.has(owner)) return;
    if (!s.alive) {
      s.listener.expired('the server reported the session expired');
      return;
    }
    this.cancelExpiry(s.sessionId);
    s.resume();
    s.listener.connected();
  }

  /** Ends a session: its ephemeral nodes go (watchers of other sessions fire), its watches drop. */
  private end(s: FakeSession): void {
    this.cancelExpiry(s.sessionId);
    s.kill();
    const eph = this.tree.ephemeralsOf(s.sessionId).sort((a, b) => b.length - a.length);
    if (eph.length > 0) {
      const applied = this.tree.apply(eph.map((path) => ({ type: 'delete' as const, path })), s.sessionId);
      this.dispatch(applied.events);
    }
    if (s.abandonedByClient) {
      this.sessions.delete(s.sessionId);
      this.owners.delete(s.sessionId);
    }
  }

  private armExpiry(s: FakeSession): void {
    this.cancelExpiry(s.sessionId);
    const ac = new AbortController();
    this.expiryTimers.set(s.sessionId, ac);
    this.opts.clock.sleep(s.timeoutMs, ac.signal).then(
      () => {
        if (this.expiryTimers.get(s.sessionId) !== ac) return;
        this.expiryTimers.delete(s.sessionId);
        this.end(s);
      },
      () => undefined,
    );
  }

  private cancelExpiry(id: string): void {
    this.expiryTimers.get(id)?.abort();
    this.expiryTimers.delete(id);
  }

  private session(ref: SessionRef): FakeSession | undefined {
    const id = typeof ref === 'string' ? ref : ref.sessionId;
    return id === undefined ? undefined : this.sessions.get(id);
  }
}
