import zookeeper from 'node-zookeeper-client';
import type { Client, Event as ZkEvent, Stat, State } from 'node-zookeeper-client';
import type { Clock } from '@pvc/runtime';
import { zkError, type ZkError } from '../errors.js';
import type { RawWatcher, SessionHandle, SessionListener } from '../core/session.js';
import type { DataSnapshot, ZkOp, ZkOpResult, ZkStat } from '../types.js';
import { runMulti } from './multi.js';
import { toZkError } from './errors-map.js';
import { toStat } from './stat.js';
import { dropSocket, watchReadTimeout } from './read-timeout.js';
import './socket-data-guard.js';

/** Connection parameters of one real session. */
export interface NodeSessionOptions {
  connectionString: string;
  sessionTimeoutMs: number;
  /** Max random delay between reconnection rounds (node-zookeeper-client `spinDelay`). */
  spinDelayMs: number;
  /** Silence after which the server is left (undefined: the read-timeout default). */
  readTimeoutMs?: number;
  clock: Clock;
}

/** Credentials of a live session (for the "same session id, second connection" expiry trick). */
export interface SessionCredentials {
  id: Buffer;
  password: Buffer;
}

const CLOSE_WAIT_MS = 2000;

function toRawEvent(e: ZkEvent): Parameters<RawWatcher>[0] {
  const t = e.getType();
  const E = zookeeper.Event;
  const type = t === E.NODE_CREATED ? 'created' : t === E.NODE_DELETED ? 'deleted' : t === E.NODE_DATA_CHANGED ? 'changed' : 'children';
  return { type, path: e.getPath() };
}

/**
 * One real Zookeeper session over node-zookeeper-client (3.4 protocol). Every pending call is
 * tracked so that `abandon()` can reject it: the library would otherwise keep unsent requests
 * of a dead session queued forever.
 */
export class NodeSession implements SessionHandle {
  private readonly client: Client;
  private readonly pending = new Set<(err: ZkError) => void>();
  private dead = false;
  private connectedOnce = false;
  private readonly stopReadTimeout: () => void;

  constructor(
    private readonly opts: NodeSessionOptions,
    private readonly listener: SessionListener,
  ) {
    this.client = zookeeper.createClient(opts.connectionString, {
      sessionTimeout: opts.sessionTimeoutMs,
      spinDelay: opts.spinDelayMs,
      retries: 0,
    });
    this.client.on('state', (state) => this.onState(state));
    this.stopReadTimeout = watchReadTimeout(this.client, opts.clock, () => !this.dead, { deadAfterMs: opts.readTimeoutMs });
    this.client.connect();
  }

  get sessionId(): string | undefined {
    return this.connectedOnce ? this.client.getSessionId().toString('hex') : undefined;
  }

  get timeoutMs(): number {
    return this.client.getSessionTimeout();
  }

  /** Session id and password, once connected. */
  credentials(): SessionCredentials | undefined {
    if (!this.connectedOnce) return undefined;
    return { id: this.client.getSessionId(), password: this.client.getSessionPassword() };
  }

  getData(path: string, watcher?: RawWatcher): Promise<DataSnapshot> {
    return this.track<DataSnapshot>(path, (cb) => {
      const done = (err: unknown, data: Buffer | undefined, stat: Stat): void =>
        cb(err, err ? undefined : { data: data ? data.toString('utf8') : '', stat: toStat(stat) });
      if (watcher) this.client.getData(path, (e) => watcher(toRawEvent(e)), done);
      else this.client.getData(path, done);
    });
  }

  exists(path: string, watcher?: RawWatcher): Promise<ZkStat | undefined> {
    return this.track<ZkStat | undefined>(path, (cb) => {
      const done = (err: unknown, stat: Stat | null): void => cb(err, stat ? toStat(stat) : undefined);
      if (watcher) this.client.exists(path, (e) => watcher(toRawEvent(e)), done);
      else this.client.exists(path, done);
    });
  }

  getChildren(path: string, watcher?: RawWatcher): Promise<string[]> {
    return this.track<string[]>(path, (cb) => {
      const done = (err: unknown, children: string[]): void => cb(err, err ? undefined : [...children]);
      if (watcher) this.client.getChildren(path, (e) => watcher(toRawEvent(e)), done);
      else this.client.getChildren(path, done);
    });
  }

  create(path: string, data: string, mode: { ephemeral: boolean; sequential: boolean }): Promise<string> {
    const M = zookeeper.CreateMode;
    const flag = mode.ephemeral
      ? mode.sequential ? M.EPHEMERAL_SEQUENTIAL : M.EPHEMERAL
      : mode.sequential ? M.PERSISTENT_SEQUENTIAL : M.PERSISTENT;
    return this.track<string>(path, (cb) => {
      this.client.create(path, Buffer.from(data, 'utf8'), flag, (err, created) => cb(err, created));
    });
  }

  setData(path: string, data: string, version: number): Promise<ZkStat> {
    return this.track<ZkStat>(path, (cb) => {
      this.client.setData(path, Buffer.from(data, 'utf8'), version, (err, stat) => cb(err, err ? undefined : toStat(stat)));
    });
  }

  remove(path: string, version: number): Promise<void> {
    return this.track<void>(path, (cb) => this.client.remove(path, version, (err) => cb(err, undefined)));
  }

  multi(ops: readonly ZkOp[]): Promise<ZkOpResult[]> {
    return this.track<ZkOpResult[]>(undefined, (cb) => runMulti(this.client.transaction(), ops, cb));
  }

  async close(): Promise<void> {
    this.stopReadTimeout();
    if (this.dead) return;
    if (this.client.getState() !== zookeeper.State.SYNC_CONNECTED) {
      this.abandon();
      return;
    }
    this.dead = true;
    const closed = new Promise<void>((resolve) => this.client.once('disconnected', () => resolve()));
    const ac = new AbortController();
    this.client.close();
    await Promise.race([closed, this.opts.clock.sleep(CLOSE_WAIT_MS, ac.signal).catch(() => undefined)]);
    ac.abort();
    this.rejectPending('CONNECTION_LOSS');
  }

  dropConnection(): void {
    if (!this.dead) dropSocket(this.client);
  }

  abandon(): void {
    this.stopReadTimeout();
    if (this.dead) return;
    this.dead = true;
    this.rejectPending('SESSION_EXPIRED');
    // Closing before the library created its first socket would make it write to `undefined`:
    // defer to the next tick, after its own connect tick.
    process.nextTick(() => {
      try {
        this.client.close();
      } catch {
        // already closed
      }
    });
  }

  private onState(state: State): void {
    if (this.dead) return;
    const S = zookeeper.State;
    if (state === S.SYNC_CONNECTED) {
      this.connectedOnce = true;
      this.listener.connected();
    } else if (state === S.DISCONNECTED) {
      this.listener.disconnected();
    } else if (state === S.EXPIRED) {
      this.dead = true;
      this.stopReadTimeout();
      this.rejectPending('SESSION_EXPIRED');
      this.listener.expired('the server reported the session expired');
    } else if (state === S.AUTH_FAILED) {
      this.listener.disconnected();
    }
  }

  private rejectPending(code: 'SESSION_EXPIRED' | 'CONNECTION_LOSS'): void {
    const all = [...this.pending];
    this.pending.clear();
    for (const reject of all) reject(zkError(code));
  }

  /** Runs a callback-style call, mapping errors; rejects at once when the session is dead. */
  private track<T>(path: string | undefined, start: (cb: (err: unknown, value: T | undefined) => void) => void): Promise<T> {
    if (this.dead) return Promise.reject(zkError('SESSION_EXPIRED', path));
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const fail = (e: ZkError): void => {
        if (settled) return;
        settled = true;
        this.pending.delete(fail);
        reject(e);
      };
      this.pending.add(fail);
      try {
        start((err, value) => {
          if (settled) return;
          if (err) return fail(toZkError(err, path));
          settled = true;
          this.pending.delete(fail);
          resolve(value as T);
        });
      } catch (err) {
        fail(toZkError(err, path));
      }
    });
  }
}
