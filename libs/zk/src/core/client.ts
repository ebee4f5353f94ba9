import { setMaxListeners } from 'node:events';
import type { Clock, Logger } from '@pvc/runtime';
import { isZkError, ZkError } from '../errors.js';
import type {
  ChildrenWatcher,
  CreateOptions,
  DataSnapshot,
  DataWatcher,
  DeleteOptions,
  ObjectEntry,
  OpOptions,
  SessionEvents,
  SessionState,
  SetOptions,
  Unsubscribe,
  WriteOptions,
  WritePair,
  ZkClient,
  ZkOp,
  ZkOpResult,
  ZkStat,
} from '../types.js';
import { anySignal, withDeadline } from './deadline.js';
import type { SessionHandle, SessionOpener } from './session.js';
import { SessionManager } from './session-manager.js';
import { ChildrenWatch, DataWatch, type WatchHost } from './watch.js';
import { ancestorsOf, buildDeleteOps, buildObjectOps, buildWriteOps } from './write.js';

/** Options shared by the real client and the fake. */
export interface CoreOptions {
  clock: Clock;
  logger?: Logger | undefined;
  /** Default deadline of every call, in ms (default 10 000). */
  opTimeoutMs?: number;
  /** See {@link SessionManagerOptions.localExpiry}. */
  localExpiry?: boolean;
}

const DEFAULT_OP_TIMEOUT_MS = 10_000;
const WATCH_RETRY_PAUSE_MS = 500;
const DELETE_RACE_RETRIES = 3;

/**
 * The ZkClient implementation shared by the real client and the fake: deadlines, session events,
 * self-re-arming watches, the original's write transaction, atomic object creation and recursive
 * delete, all on top of one {@link SessionHandle} at a time.
 */
export class ZkClientCore implements ZkClient {
  protected readonly sessions: SessionManager;
  private readonly watches = new Set<DataWatch | ChildrenWatch>();
  private readonly opTimeoutMs: number;
  private readonly closing = new AbortController();
  private readonly host: WatchHost;

  constructor(
    open: SessionOpener,
    protected readonly opts: CoreOptions,
  ) {
    this.opTimeoutMs = opts.opTimeoutMs ?? DEFAULT_OP_TIMEOUT_MS;
    // Every in-flight call listens on the closing signal; hundreds may be pipelined at once.
    setMaxListeners(0, this.closing.signal);
    this.sessions = new SessionManager(open, { clock: opts.clock, logger: opts.logger, localExpiry: opts.localExpiry });
    this.host = {
      handle: () => (this.sessions.state === 'closed' ? undefined : this.sessions.active()),
      isCurrent: (h) => this.sessions.isCurrent(h),
      bounded: (what, run) => withDeadline(what, opts.clock, run, { timeoutMs: this.opTimeoutMs }),
      connected: () => this.sessions.state === 'connected',
      pause: () => opts.clock.sleep(WATCH_RETRY_PAUSE_MS, this.closing.signal).catch(() => undefined),
      logger: opts.logger,
    };
    // Level-based re-arm. A new session has no watches: every watch reads its node again. A
    // reconnection that keeps the session keeps the watches registered on the server (the client
    // re-sends them with its last zxid, and a change made meanwhile fires them), so only the
    // watches whose last read failed or is still in flight read again: re-reading every key made a
    // vmd's reconnection cost one read per watched key (20,000 at 100 nodes x 50 VMs, 3.4 s of
    // blocked event loop in bench/zk-ensemble-scale.ts --reconnect-probe).
    this.sessions.events.on('connected', ({ newSession }) => {
      for (const w of this.watches) if (newSession || w.needsRearm) w.trigger();
    });
  }

  get state(): SessionState {
    return this.sessions.state;
  }

  get sessionId(): string | undefined {
    return this.sessions.sessionId;
  }

  /** The session handle in use (tests and the testing helpers only). */
  currentHandle(): SessionHandle {
    return this.sessions.active();
  }

  on<E extends keyof SessionEvents>(event: E, listener: (payload: SessionEvents[E]) => void): Unsubscribe {
    return this.sessions.events.on(event, listener);
  }

  waitConnected(opts: OpOptions = {}): Promise<void> {
    if (this.state === 'connected') return Promise.resolve();
    if (this.state === 'closed') return Promise.reject(new ZkError('CLOSED', 'the ZK client is closed'));
    let off: Unsubscribe = () => undefined;
    const connected = new Promise<void>((resolve) => {
      off = this.on('connected', () => resolve());
    });
    return this.bounded('waiting for a ZK connection', () => connected, opts).finally(off);
  }

  dropConnection(): void {
    if (this.state !== 'connected') return;
    this.opts.logger?.warn('dropping the ZK server connection (it did not answer in time); reconnecting to the next server');
    this.sessions.active().dropConnection();
  }

  get(path: string, opts?: OpOptions): Promise<DataSnapshot> {
    return this.call(`get ${path}`, (h) => h.getData(path), opts);
  }

  async read(path: string, opts?: OpOptions): Promise<string | undefined> {
    try {
      return (await this.get(path, opts)).data;
    } catch (err) {
      if (isZkError(err, 'NO_NODE')) return undefined;
      throw err;
    }
  }

  exists(path: string, opts?: OpOptions): Promise<ZkStat | undefined> {
    return this.call(`exists ${path}`, (h) => h.exists(path), opts);
  }

  children(path: string, opts?: OpOptions): Promise<string[]> {
    return this.call(`children ${path}`, (h) => h.getChildren(path), opts);
  }

  create(path: string, data = '', opts: CreateOptions = {}): Promise<string> {
    const mode = { ephemeral: opts.ephemeral ?? false, sequential: opts.sequential ?? false };
    return this.call(`create ${path}`, (h) => h.create(path, data, mode), opts);
  }

  set(path: string, data: string, opts: SetOptions = {}): Promise<ZkStat> {
    return this.call(`set ${path}`, (h) => h.setData(path, data, opts.version ?? -1), opts);
  }

  async delete(path: string, opts: DeleteOptions = {}): Promise<void> {
    const version = opts.version ?? -1;
    try {
      if (opts.recursive === false) {
        await this.call(`delete ${path}`, (h) => h.remove(path, version), opts);
        return;
      }
      await this.deleteTree(path, version, opts);
    } catch (err) {
      if (opts.missingOk && isZkError(err, 'NO_NODE') && err.path === path) return;
      throw err;
    }
  }

  async ensurePath(path: string, opts?: OpOptions): Promise<void> {
    for (const p of [...ancestorsOf(path), path]) {
      if ((await this.exists(p, opts)) !== undefined) continue;
      try {
        await this.create(p, '', opts);
      } catch (err) {
        if (!isZkError(err, 'NODE_EXISTS')) throw err;
      }
    }
  }

  multi(ops: readonly ZkOp[], opts?: OpOptions): Promise<ZkOpResult[]> {
    if (ops.length === 0) return Promise.resolve([]);
    return this.call(`transaction of ${ops.length} ops`, (h) => h.multi(ops), opts);
  }

  async write(pairs: Iterable<WritePair>, opts: WriteOptions = {}): Promise<void> {
    const list = [...pairs];
    if (list.length === 0) return;
    for (let attempt = 0; ; attempt++) {
      const stats = await Promise.all(list.map(([p]) => this.exists(p, opts)));
      try {
        await this.multi(buildWriteOps(list, stats), opts);
        return;
      } catch (err) {
        // BAD_VERSION / NODE_EXISTS here mean a concurrent writer touched one of our keys.
        const conflict = isZkError(err, 'BAD_VERSION', 'NODE_EXISTS');
        if (!conflict || attempt >= (opts.conflictRetries ?? 0)) throw err;
      }
    }
  }

  async createObject(root: string, entries: readonly ObjectEntry[], opts?: OpOptions): Promise<void> {
    await this.multi(buildObjectOps(root, entries), opts);
  }

  watchData(path: string, watcher: DataWatcher): Unsubscribe {
    return this.addWatch(new DataWatch(path, watcher, this.host));
  }

  watchChildren(path: string, watcher: ChildrenWatcher): Unsubscribe {
    return this.addWatch(new ChildrenWatch(path, watcher, this.host));
  }

  async close(): Promise<void> {
    for (const w of this.watches) w.stop();
    this.watches.clear();
    this.closing.abort();
    await this.sessions.close();
  }

  /** Runs one raw call on the live handle under the call's deadline and signal. */
  protected call<T>(what: string, run: (h: SessionHandle) => Promise<T>, opts: OpOptions = {}): Promise<T> {
    return this.bounded(what, () => run(this.sessions.active()), opts);
  }

  private bounded<T>(what: string, run: () => Promise<T>, opts: OpOptions): Promise<T> {
    if (this.state === 'closed') return Promise.reject(new ZkError('CLOSED', `${what}: the ZK client is closed`));
    const signal = anySignal(opts.signal, this.closing.signal);
    return withDeadline(what, this.opts.clock, run, { timeoutMs: opts.timeoutMs ?? this.opTimeoutMs, signal });
  }

  private addWatch(w: DataWatch | ChildrenWatch): Unsubscribe {
    if (this.state === 'closed') throw new ZkError('CLOSED', 'the ZK client is closed');
    this.watches.add(w);
    w.trigger();
    return () => {
      w.stop();
      this.watches.delete(w);
    };
  }

  /** Lists the subtree and removes it in one transaction; retries when a child appears meanwhile. */
  private async deleteTree(path: string, version: number, opts: OpOptions): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const subtree = await this.listTree(path, opts);
      try {
        await this.multi(buildDeleteOps(subtree, version), opts);
        return;
      } catch (err) {
        if (!isZkError(err, 'NOT_EMPTY', 'NO_NODE') || attempt >= DELETE_RACE_RETRIES) throw err;
        if (isZkError(err, 'NO_NODE') && err.path === path) throw err;
      }
    }
  }

  /** The node and all its descendants, parents first. Throws NO_NODE when `path` is absent. */
  private async listTree(path: string, opts: OpOptions): Promise<string[]> {
    const out = [path];
    for (let i = 0; i < out.length; i++) {
      const p = out[i] as string;
      let kids: string[];
      try {
        kids = await this.children(p, opts);
      } catch (err) {
        if (i > 0 && isZkError(err, 'NO_NODE')) continue; // removed meanwhile
        throw err;
      }
      for (const k of kids) out.push(p === '/' ? `/${k}` : `${p}/${k}`);
    }
    return out;
  }
}
