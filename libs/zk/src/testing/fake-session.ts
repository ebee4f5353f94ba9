import { zkError, ZkTransactionError, type ZkError } from '../errors.js';
import type { RawWatchEvent, RawWatcher, SessionHandle, SessionListener } from '../core/session.js';
import type { DataSnapshot, ZkOp, ZkOpResult, ZkStat } from '../types.js';
import type { FakeTree } from './fake-tree.js';
import type { FakeZkStats } from './fake-stats.js';
import type { FakeWatchIndex } from './fake-watch-index.js';

/** What a fake session needs from its server. */
export interface FakeServerPort {
  readonly tree: FakeTree;
  /** Request and notification counters. */
  readonly stats: FakeZkStats;
  /** Who watches what: the session keeps it current as it adds, fires and drops watches. */
  readonly watches: FakeWatchIndex<FakeSession>;
  /** Hands the watch events of an applied change to the sessions concerned. */
  dispatch(events: readonly RawWatchEvent[]): void;
  /** Consumes a pending `failNextWrite` knob, if any. */
  takeWriteFailure(): { code: ZkError['code']; applied: boolean } | undefined;
  /** The client gave up on this session (expired or closed while disconnected). */
  abandoned(session: FakeSession): void;
  /** The client closed this session while connected: end it now. */
  closed(session: FakeSession): void;
  /** The client dropped its connection: disconnect, then reconnect (unless partitioned). */
  bounce(session: FakeSession): void;
}

type Queued = () => void;

/**
 * One session of the fake server, seen from the client: calls run against the shared tree on
 * the next microtask (FIFO, like a pipelined connection); while disconnected they queue, and
 * watch notifications are buffered, until the connection returns. One-shot watches are kept per
 * session and de-duplicated per function, like node-zookeeper-client's WatcherManager.
 */
export class FakeSession implements SessionHandle {
  alive = true;
  private gone = false;
  private online = false;
  private readonly queue: Queued[] = [];
  private readonly buffered: RawWatchEvent[] = [];
  private readonly data = new Map<string, Set<RawWatcher>>();
  private readonly exist = new Map<string, Set<RawWatcher>>();
  private readonly child = new Map<string, Set<RawWatcher>>();

  constructor(
    readonly sessionId: string,
    /** Creation order on the server (changes reach sessions in this order). */
    readonly order: number,
    readonly timeoutMs: number,
    private readonly server: FakeServerPort,
    readonly listener: SessionListener,
  ) {
    this.server.watches.setOffline(this, true);
  }

  /** True once the client dropped this handle (no more events to it). */
  get abandonedByClient(): boolean {
    return this.gone;
  }

  /** Whether the connection is up (set by the server; offline sessions buffer changes). */
  get connected(): boolean {
    return this.online;
  }

  set connected(on: boolean) {
    this.online = on;
    this.server.watches.setOffline(this, !on && this.alive && !this.gone);
  }

  getData(path: string, watcher?: RawWatcher): Promise<DataSnapshot> {
    return this.run(() => {
      this.server.stats.op('getData', path);
      const v = this.server.tree.get(path);
      if (watcher) this.watch(this.data, path, watcher);
      return v;
    });
  }

  exists(path: string, watcher?: RawWatcher): Promise<ZkStat | undefined> {
    return this.run(() => {
      this.server.stats.op('exists', path);
      const s = this.server.tree.stat(path);
      if (watcher) this.watch(s ? this.data : this.exist, path, watcher);
      return s;
    });
  }

  getChildren(path: string, watcher?: RawWatcher): Promise<string[]> {
    return this.run(() => {
      this.server.stats.op('getChildren', path);
      const c = this.server.tree.children(path);
      if (watcher) this.watch(this.child, path, watcher);
      return c;
    });
  }

  async create(path: string, data: string, mode: { ephemeral: boolean; sequential: boolean }): Promise<string> {
    const [r] = await this.single({ type: 'create', path, data, ...mode });
    return r?.type === 'create' ? r.path : path;
  }

  async setData(path: string, data: string, version: number): Promise<ZkStat> {
    const [r] = await this.single({ type: 'set', path, data, version });
    if (r?.type !== 'set') throw zkError('SYSTEM_ERROR', path);
    return r.stat;
  }

  async remove(path: string, version: number): Promise<void> {
    await this.single({ type: 'delete', path, version });
  }

  multi(ops: readonly ZkOp[]): Promise<ZkOpResult[]> {
    return this.run(() => {
      this.server.stats.op('multi', ops[0]?.path);
      return this.commit(ops);
    });
  }

  async close(): Promise<void> {
    if (this.gone) return;
    if (this.connected && this.alive) {
      this.gone = true;
      this.server.watches.setOffline(this, false);
      await Promise.resolve();
      this.server.closed(this);
      this.rejectQueued('CONNECTION_LOSS');
      return;
    }
    this.abandon();
  }

  dropConnection(): void {
    if (!this.gone && this.connected) this.server.bounce(this);
  }

  abandon(): void {
    if (this.gone) return;
    this.gone = true;
    this.server.watches.setOffline(this, false);
    this.rejectQueued('SESSION_EXPIRED');
    this.server.abandoned(this);
  }

  /** Server side: the connection came back; flushes queued calls and buffered notifications. */
  resume(): void {
    this.connected = true;
    for (const e of this.buffered.splice(0)) this.deliver(e);
    for (const q of this.queue.splice(0)) q();
  }

  /** Server side: the session ended; pending calls fail, watches are dropped. */
  kill(): void {
    this.alive = false;
    this.connected = false;
    for (const m of [this.data, this.exist, this.child]) for (const path of m.keys()) this.server.watches.unwatch(path, this);
    this.data.clear();
    this.exist.clear();
    this.child.clear();
    this.buffered.length = 0;
    this.rejectQueued('SESSION_EXPIRED');
  }

  /** Server side: a change happened; fire (or buffer) matching one-shot watches. */
  notify(e: RawWatchEvent): void {
    if (!this.alive || this.gone) return;
    if (this.connected) this.deliver(e);
    else this.buffered.push(e);
  }

  private deliver(e: RawWatchEvent): void {
    const fired = new Set<RawWatcher>();
    const take = (m: Map<string, Set<RawWatcher>>): void => {
      for (const w of m.get(e.path) ?? []) fired.add(w);
      m.delete(e.path);
    };
    if (e.type === 'created' || e.type === 'changed') {
      take(this.data);
      take(this.exist);
    } else if (e.type === 'deleted') {
      take(this.data);
      take(this.child);
    } else {
      take(this.child);
    }
    if (!this.data.has(e.path) && !this.exist.has(e.path) && !this.child.has(e.path)) this.server.watches.unwatch(e.path, this);
    if (fired.size > 0) this.server.stats.notification();
    for (const w of fired) queueMicrotask(() => w(e));
  }

  private watch(m: Map<string, Set<RawWatcher>>, path: string, w: RawWatcher): void {
    add(m, path, w);
    this.server.watches.watch(path, this);
  }

  private async single(op: ZkOp): Promise<ZkOpResult[]> {
    try {
      return await this.run(() => {
        this.server.stats.op(op.type === 'check' ? 'multi' : op.type, op.path);
        return this.commit([op]);
      });
    } catch (err) {
      // Single calls report plain errors, not transaction errors.
      if (err instanceof ZkTransactionError) throw zkError(err.code, err.path);
      throw err;
    }
  }

  private commit(ops: readonly ZkOp[]): ZkOpResult[] {
    const failure = this.server.takeWriteFailure();
    if (failure && !failure.applied) throw zkError(failure.code, ops[0]?.path);
    const applied = this.server.tree.apply(ops, this.sessionId);
    this.server.dispatch(applied.events);
    if (failure) throw zkError(failure.code, ops[0]?.path);
    return applied.results;
  }

  /** Runs `fn` against the tree on the next microtask, or once reconnected. */
  private run<T>(fn: () => T): Promise<T> {
    if (!this.alive || this.gone) return Promise.reject(zkError('SESSION_EXPIRED'));
    return new Promise<T>((resolve, reject) => {
      const exec = (): void => {
        if (!this.alive || this.gone) return reject(zkError('SESSION_EXPIRED'));
        try {
          resolve(fn());
        } catch (err) {
          reject(err);
        }
      };
      const task = (): void => queueMicrotask(exec);
      (task as Queued & { reject?: (e: ZkError) => void }).reject = reject;
      if (this.connected) task();
      else this.queue.push(task);
    });
  }

  private rejectQueued(code: 'SESSION_EXPIRED' | 'CONNECTION_LOSS'): void {
    for (const q of this.queue.splice(0)) (q as Queued & { reject?: (e: ZkError) => void }).reject?.(zkError(code));
  }
}

function add(m: Map<string, Set<RawWatcher>>, path: string, w: RawWatcher): void {
  let s = m.get(path);
  if (!s) {
    s = new Set();
    m.set(path, s);
  }
  s.add(w);
}
