/**
 * The real ZK client (libs/zk's core over node-zookeeper-client, as `RealZkClient` builds it) with
 * a counting session handle underneath: every request as it goes on the wire (a client `write` is
 * its `exists` calls + one `multi`; a `delete` a `getChildren` + a `multi`), every watch
 * notification received, and the latency of each `multi`, per session label. For benches against
 * a real server; the daemons' code above the handle is unchanged.
 */
import type { Clock, Logger } from '@pvc/runtime';
import { connectionString } from '@pvc/zk';
import { ZkClientCore } from '../../libs/zk/src/core/client.js';
import type { RawWatcher, SessionHandle, SessionListener } from '../../libs/zk/src/core/session.js';
import { NodeSession } from '../../libs/zk/src/real/node-session.js';

/** Request kinds as they reach the server. */
export type WireOp = 'getData' | 'exists' | 'getChildren' | 'create' | 'setData' | 'remove' | 'multi';

/** Counters shared by every counted client of a bench. */
export class WireStats {
  readonly ops: Record<WireOp, number> = { getData: 0, exists: 0, getChildren: 0, create: 0, setData: 0, remove: 0, multi: 0 };
  /** Notifications received: one per session, path and event type (what the server sends). */
  notifications = 0;
  /** Connections lost (the session suspended), by session label. */
  readonly suspended = new Map<string, number>();
  /** Failed requests (any error, NO_NODE included). */
  errors = 0;
  /** Failed requests by kind and error code. */
  readonly errorCodes = new Map<string, number>();
  /** Latency (ms) of each `multi`, by session label, while {@link recording}. */
  readonly multiMs = new Map<string, number[]>();
  recording = false;
  /** Requests by kind and path shape (UUIDs and node names folded), while {@link byPath} is set. */
  byPath: Map<string, number> | undefined;

  countPath(op: WireOp, path: string): void {
    if (!this.byPath) return;
    const key = `${op} ${path.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, '<uuid>').replace(/\/hv\d+/g, '/<node>')}`;
    this.byPath.set(key, (this.byPath.get(key) ?? 0) + 1);
  }

  /** Total requests. */
  total(): number {
    return Object.values(this.ops).reduce((a, b) => a + b, 0);
  }

  /** A copy of the counters. */
  snapshot(): { ops: Record<WireOp, number>; notifications: number; errors: number; total: number } {
    return { ops: { ...this.ops }, notifications: this.notifications, errors: this.errors, total: this.total() };
  }

  recordMulti(label: string, ms: number): void {
    if (!this.recording) return;
    let a = this.multiMs.get(label);
    if (!a) this.multiMs.set(label, (a = []));
    a.push(ms);
  }
}

/** Wraps one session handle: counts requests and notifications, times `multi`. */
function counted(inner: SessionHandle, stats: WireStats, label: string): SessionHandle {
  // node-zookeeper-client calls every watcher registered on a path for one server notification;
  // those calls are synchronous, so a key seen in this tick is the same notification.
  const seen = new Set<string>();
  // The core passes the same watcher again when it re-arms on the same session (the library then
  // keeps one registration); the wrapper must be the same function too.
  const wrapped = new WeakMap<RawWatcher, RawWatcher>();
  const wrap = (w: RawWatcher | undefined): RawWatcher | undefined => {
    if (!w) return undefined;
    let fn = wrapped.get(w);
    if (!fn) {
      fn = (e) => {
        const key = `${e.type} ${e.path}`;
        if (!seen.has(key)) {
          if (seen.size === 0) queueMicrotask(() => seen.clear());
          seen.add(key);
          stats.notifications++;
        }
        w(e);
      };
      wrapped.set(w, fn);
    }
    return fn;
  };
  const count = <T>(op: WireOp, p: Promise<T>, path = ''): Promise<T> => {
    stats.ops[op]++;
    stats.countPath(op, path);
    return p.catch((err: unknown) => {
      stats.errors++;
      const key = `${op} ${(err as { code?: string }).code ?? 'unknown'}`;
      stats.errorCodes.set(key, (stats.errorCodes.get(key) ?? 0) + 1);
      throw err;
    });
  };
  return {
    get sessionId() {
      return inner.sessionId;
    },
    get timeoutMs() {
      return inner.timeoutMs;
    },
    getData: (path, w) => count('getData', inner.getData(path, wrap(w)), path),
    exists: (path, w) => count('exists', inner.exists(path, wrap(w)), path),
    getChildren: (path, w) => count('getChildren', inner.getChildren(path, wrap(w)), path),
    create: (path, data, mode) => count('create', inner.create(path, data, mode)),
    setData: (path, data, version) => count('setData', inner.setData(path, data, version)),
    remove: (path, version) => count('remove', inner.remove(path, version)),
    multi: (ops) => {
      const t0 = performance.now();
      return count('multi', inner.multi(ops)).finally(() => stats.recordMulti(label, performance.now() - t0));
    },
    close: () => inner.close(),
    abandon: () => inner.abandon(),
    dropConnection: () => inner.dropConnection(),
  };
}

/** Options of {@link CountingRealZkClient}: `RealZkClient`'s, plus the counters and a label. */
export interface CountingZkOptions {
  hosts: readonly string[];
  sessionTimeoutMs?: number;
  opTimeoutMs?: number;
  readTimeoutMs?: number;
  localExpiry?: boolean;
  clock: Clock;
  logger?: Logger;
  stats: WireStats;
  /** Groups the multi latencies (e.g. `keepaliled`, `vmd`). */
  label: string;
}

/** `RealZkClient` with {@link WireStats} counting underneath (same defaults). */
export class CountingRealZkClient extends ZkClientCore {
  constructor(opts: CountingZkOptions) {
    const sessionOpts = {
      connectionString: connectionString(opts.hosts), sessionTimeoutMs: opts.sessionTimeoutMs ?? 10_000,
      spinDelayMs: 500, readTimeoutMs: opts.readTimeoutMs, clock: opts.clock,
    };
    super((listener: SessionListener) => counted(new NodeSession(sessionOpts, listener), opts.stats, opts.label), {
      clock: opts.clock, logger: opts.logger, opTimeoutMs: opts.opTimeoutMs, localExpiry: opts.localExpiry,
    });
    this.on('suspended', () => opts.stats.suspended.set(opts.label, (opts.stats.suspended.get(opts.label) ?? 0) + 1));
  }
}
