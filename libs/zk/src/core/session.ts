import type { DataSnapshot, ZkOp, ZkOpResult, ZkStat } from '../types.js';

/** A one-shot Zookeeper watch notification, as the wire protocol delivers it. */
export interface RawWatchEvent {
  type: 'created' | 'deleted' | 'changed' | 'children';
  path: string;
}

/** A one-shot watcher; Zookeeper calls it at most once per registration. */
export type RawWatcher = (event: RawWatchEvent) => void;

/** What a session handle reports to its owner. Called at most once for `expired`. */
export interface SessionListener {
  connected(): void;
  disconnected(): void;
  expired(reason: string): void;
}

/**
 * Internal port: ONE Zookeeper session with the raw 3.4-protocol operations (one-shot watches,
 * no timeouts). The core builds the public {@link ZkClient} on top of it; the real adapter wraps
 * node-zookeeper-client, the fake an in-memory server. Errors are always {@link ZkError}s.
 *
 * Contract: while disconnected, calls wait for the reconnection; once the handle is expired or
 * abandoned, every pending and future call rejects with SESSION_EXPIRED (never hangs).
 */
export interface SessionHandle {
  /** Session id (16 hex digits) once the first connection succeeded. */
  readonly sessionId: string | undefined;
  /** Negotiated session timeout in ms (the requested one before connecting). */
  readonly timeoutMs: number;
  getData(path: string, watcher?: RawWatcher): Promise<DataSnapshot>;
  /** Registers a data watch when the node exists, an existence watch when it does not. */
  exists(path: string, watcher?: RawWatcher): Promise<ZkStat | undefined>;
  getChildren(path: string, watcher?: RawWatcher): Promise<string[]>;
  create(path: string, data: string, mode: { ephemeral: boolean; sequential: boolean }): Promise<string>;
  setData(path: string, data: string, version: number): Promise<ZkStat>;
  remove(path: string, version: number): Promise<void>;
  multi(ops: readonly ZkOp[]): Promise<ZkOpResult[]>;
  /** Ends the session on the server if connected; resolves when done (bounded time). */
  close(): Promise<void>;
  /** Drops the handle at once (after expiry): no more events, pending calls reject. */
  abandon(): void;
  /**
   * Drops the current server connection and moves on to the next server, keeping the session (as
   * after a network error). Used when the server stops answering in time.
   */
  dropConnection(): void;
}

/** Opens a new session handle that reports to `listener`. */
export type SessionOpener = (listener: SessionListener) => SessionHandle;
