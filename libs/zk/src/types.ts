/**
 * The ZkClient port: everything a service may do with Zookeeper. The real implementation is
 * {@link connectZk} (node-zookeeper-client); the fake is `FakeZkServer` from `@pvc/zk/testing`.
 * Both are built on the same core, so the watch, write and session semantics are identical.
 */

/**
 * Session life cycle.
 * - `connecting`: before the first session is established.
 * - `connected`: the session is live.
 * - `suspended`: the connection dropped; the session may still be alive on the server
 *   (ephemeral nodes and held locks are probably still there, but nothing is guaranteed).
 * - `expired`: the session is gone (ephemerals and locks lost); a new session is being created.
 * - `closed`: `close()` was called.
 */
export type SessionState = 'connecting' | 'connected' | 'suspended' | 'expired' | 'closed';

/** Node metadata, as Zookeeper reports it. */
export interface ZkStat {
  /** Data version; bumps on every set, even of the same value. */
  version: number;
  /** Child version; bumps on every child create and delete. */
  cversion: number;
  numChildren: number;
  dataLength: number;
  /** Owning session id (hex) of an ephemeral node; undefined for persistent nodes. */
  ephemeralOwner: string | undefined;
  czxid: bigint;
  mzxid: bigint;
  /** Milliseconds since the epoch. */
  ctime: number;
  mtime: number;
}

/** Every call takes an optional abort signal and deadline (default: the client's `opTimeoutMs`). */
export interface OpOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

export interface CreateOptions extends OpOptions {
  ephemeral?: boolean;
  /** Appends Zookeeper's 10-digit sequence suffix (a per-parent counter of child creations). */
  sequential?: boolean;
}

export interface SetOptions extends OpOptions {
  /** Expected current version; -1 or absent = any. */
  version?: number;
}

export interface DeleteOptions extends OpOptions {
  /** Delete the whole subtree (default true, like the original). */
  recursive?: boolean;
  /** Expected version of the top node; -1 or absent = any. */
  version?: number;
  /** Resolve instead of throwing NO_NODE when the node is absent. */
  missingOk?: boolean;
}

export interface WriteOptions extends OpOptions {
  /** Re-run the read-versions-then-multi cycle this many times when a concurrent change aborts it. */
  conflictRetries?: number;
}

/** One operation of a multi-op transaction. */
export type ZkOp =
  | { type: 'create'; path: string; data?: string; ephemeral?: boolean; sequential?: boolean }
  | { type: 'set'; path: string; data: string; version?: number }
  | { type: 'check'; path: string; version: number }
  | { type: 'delete'; path: string; version?: number };

/** Result of one operation of a successful transaction, in order. */
export type ZkOpResult =
  | { type: 'create'; path: string }
  | { type: 'set'; stat: ZkStat }
  | { type: 'check' }
  | { type: 'delete' };

/** A key and its already-encoded value (see the codecs). */
export type WritePair = readonly [path: string, value: string];

/** A key of an object relative to its root (`''` = the root itself) and its encoded value. */
export type ObjectEntry = readonly [relativePath: string, value: string];

/** Data and metadata of a node. */
export interface DataSnapshot {
  data: string;
  stat: ZkStat;
}

/**
 * Receives the latest value of a node (`undefined` while it does not exist). May be async: the
 * next delivery waits for it, and changes meanwhile are coalesced into one delivery of the latest.
 */
export type DataWatcher = (value: DataSnapshot | undefined) => void | Promise<void>;

/** Receives the latest child names (`undefined` while the node does not exist). Same rules. */
export type ChildrenWatcher = (children: readonly string[] | undefined) => void | Promise<void>;

/** Payloads of session events. */
export interface SessionEvents {
  /** The session is live. `newSession` is true for the first session and after every expiry. */
  connected: { sessionId: string; newSession: boolean };
  /** The connection dropped; the session may still be alive. */
  suspended: { sessionId: string };
  /** The session is gone; a new one is being created. Held locks are lost. */
  expired: { sessionId: string; reason: string };
  closed: Record<string, never>;
}

/** Removes a listener or watch. */
export type Unsubscribe = () => void;

/** The port through which every service talks to Zookeeper. Paths are absolute. */
export interface ZkClient {
  readonly state: SessionState;
  /** Current session id (16 hex digits); undefined before the first connection. */
  readonly sessionId: string | undefined;
  on<E extends keyof SessionEvents>(event: E, listener: (payload: SessionEvents[E]) => void): Unsubscribe;
  /** Resolves once the state is `connected` (at once if it already is). */
  waitConnected(opts?: OpOptions): Promise<void>;
  /**
   * Gives up on the current server and reconnects to the next one, keeping the session: for a
   * caller whose request timed out although the session looked connected (a server that went
   * silent). A no-op when not connected.
   */
  dropConnection(): void;

  /** Data and stat; throws NO_NODE when absent. */
  get(path: string, opts?: OpOptions): Promise<DataSnapshot>;
  /** Data, or undefined when absent. */
  read(path: string, opts?: OpOptions): Promise<string | undefined>;
  exists(path: string, opts?: OpOptions): Promise<ZkStat | undefined>;
  /** Child names in server order; throws NO_NODE when absent. */
  children(path: string, opts?: OpOptions): Promise<string[]>;
  /** Creates one node (parent must exist); returns the created path (with sequence suffix). */
  create(path: string, data?: string, opts?: CreateOptions): Promise<string>;
  set(path: string, data: string, opts?: SetOptions): Promise<ZkStat>;
  /** Deletes a node, by default with its whole subtree in one transaction. */
  delete(path: string, opts?: DeleteOptions): Promise<void>;
  /** Creates every missing ancestor and the node itself with empty data (kazoo `ensure_path`). */
  ensurePath(path: string, opts?: OpOptions): Promise<void>;
  /** Atomic multi-op; throws {@link ZkTransactionError} (nothing applied) when any op fails. */
  multi(ops: readonly ZkOp[], opts?: OpOptions): Promise<ZkOpResult[]>;
  /**
   * The original's `write`: one transaction where absent keys are created (their parent must exist
   * or be created earlier in the same list) and present keys are set then version-checked.
   * Throws on failure (nothing applied) instead of the original's silent `False`.
   */
  write(pairs: Iterable<WritePair>, opts?: WriteOptions): Promise<void>;
  /** Creates `root` and all its keys in one transaction; throws NODE_EXISTS if root exists. */
  createObject(root: string, entries: readonly ObjectEntry[], opts?: OpOptions): Promise<void>;

  /** Level-based, self-re-arming data watch; survives reconnects and session expiry. */
  watchData(path: string, watcher: DataWatcher): Unsubscribe;
  /** Level-based, self-re-arming children watch; survives reconnects and session expiry. */
  watchChildren(path: string, watcher: ChildrenWatcher): Unsubscribe;

  /** Ends the session (its ephemeral nodes vanish) and stops all watches. */
  close(): Promise<void>;
}
