import { randomUUID } from 'node:crypto';
import { AbortedError } from '@pvc/runtime';
import type { Clock } from '@pvc/runtime';
import { anySignal } from './core/deadline.js';
import { isZkError, ZkLockError, ZkTransactionError } from './errors.js';
import type { LockKind, LockSpec } from './schema.js';
import type { Unsubscribe, ZkClient, ZkOp } from './types.js';
import { findPredecessor, LOCK_RECIPES, sortContenders } from './lock-naming.js';

/** Options of a lock object. */
export interface LockOptions {
  clock: Clock;
  /** Data of our contender node (kazoo's identifier; PVC passes a uuid1 string). Default: a UUID. */
  identifier?: string;
}

/** Options of one acquisition. */
export interface AcquireOptions {
  /** Give up after this many ms (default: wait forever). */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** When false, return at once if the lock is not free (default true). */
  blocking?: boolean;
  /**
   * Consulted with the holder (the first contender, even when others wait between it and us)
   * whenever we are blocked: return guard ops (typically a `check` of the holder's heartbeat
   * version) to delete its node in one transaction with them, or `undefined` to wait as usual. For holders known dead whose session has not expired yet; a
   * failed guard (the holder showed life) or a contender already gone just re-checks.
   */
  breakHolder?: (holder: LockHolder) => ZkOp[] | undefined | Promise<ZkOp[] | undefined>;
}

/** A contender that blocks an acquisition: its node's full path and its data (the identifier). */
export interface LockHolder {
  path: string;
  identifier: string;
}

/** Why a held lock was lost. */
export type LostReason = 'session expired' | 'lock node deleted';

/**
 * A kazoo-compatible lock on a data key (the key itself is the lock parent). Contenders are
 * ephemeral-sequential children `<uuid4hex>__lock__<seq>` (exclusive Lock, WriteLock) or
 * `<uuid4hex>__rlock__<seq>` (ReadLock) holding the identifier; a contender waits for the
 * nearest earlier contender whose name it excludes on (see {@link LOCK_RECIPES}), exactly as
 * `kazoo.recipe.lock` does, so Python daemons and we exclude each other.
 *
 * `acquire` resolves `true` once held and `false` when `timeoutMs` passed or, with
 * `blocking: false`, when the lock is taken — in both cases our contender node is removed. It
 * rejects with AbortedError when `signal` aborts and with a ZkError on a non-retryable ZK error.
 *
 * Safety: a held lock is only as good as the session. When the session expires (or the node is
 * deleted by someone else) the lock reports `lost` via {@link KazooLock.onLost}; holders must stop
 * acting under it. A `suspended` session is NOT reported as lost: callers that need strict
 * exclusion should also pause on the client's `suspended` event.
 */
export class KazooLock {
  readonly path: string;
  readonly kind: LockKind;
  readonly identifier: string;
  private prefix: string;
  private nodeName: string | undefined;
  private createTried = false;
  private heldNow = false;
  private busy = false;
  private monitor: Unsubscribe[] = [];
  private readonly lostListeners = new Set<(reason: LostReason) => void>();

  constructor(
    private readonly client: ZkClient,
    spec: LockSpec,
    private readonly opts: LockOptions,
  ) {
    this.path = spec.path;
    this.kind = spec.kind;
    this.identifier = opts.identifier ?? randomUUID();
    this.prefix = KazooLock.newPrefix(spec.kind);
  }

  /** kazoo's contender prefix: a uuid4 hex, then the recipe's node name. */
  private static newPrefix(kind: LockKind): string {
    return randomUUID().replace(/-/g, '') + LOCK_RECIPES[kind].nodeName;
  }

  /** True while held (false again after release or loss). */
  get held(): boolean {
    return this.heldNow;
  }

  /** Our contender's node name while we hold or wait for the lock. */
  get node(): string | undefined {
    return this.nodeName;
  }

  /** Called once per loss of a held lock. Returns the removal function. */
  onLost(listener: (reason: LostReason) => void): Unsubscribe {
    this.lostListeners.add(listener);
    return () => this.lostListeners.delete(listener);
  }

  /** Acquires the lock; see the class comment for the result contract. */
  async acquire(opts: AcquireOptions = {}): Promise<boolean> {
    if (this.heldNow) return true;
    if (this.busy) throw new ZkLockError(`an acquire of ${this.path} is already running on this lock object`);
    this.busy = true;
    // A fresh prefix per acquisition: a late cleanup of an earlier attempt (below) finds only its own node.
    this.prefix = KazooLock.newPrefix(this.kind);
    const deadline = opts.timeoutMs === undefined ? Infinity : this.opts.clock.now() + opts.timeoutMs;
    try {
      const got = await this.contend(deadline, opts.signal, opts.blocking ?? true, opts.breakHolder);
      if (got) this.startMonitor();
      else await this.removeNode();
      return got;
    } catch (err) {
      await this.removeNode();
      throw err;
    } finally {
      this.busy = false;
    }
  }

  /** Releases a held lock (deletes our node). Resolves false when it was not held. */
  async release(): Promise<boolean> {
    if (!this.heldNow) return false;
    this.stopMonitor();
    this.heldNow = false;
    await this.removeNode();
    return true;
  }

  /** Identifiers of all contenders (readers and writers), in lock order, like kazoo's `contenders()`. */
  async contenders(): Promise<string[]> {
    await this.client.ensurePath(this.path);
    const names = sortContenders(await this.client.children(this.path));
    const out: string[] = [];
    for (const n of names) {
      const data = await this.client.read(`${this.path}/${n}`);
      if (data !== undefined) out.push(data);
    }
    return out;
  }

  private async contend(
    deadline: number, signal: AbortSignal | undefined, blocking: boolean, breakHolder: AcquireOptions['breakHolder'],
  ): Promise<boolean> {
    for (;;) {
      const remaining = deadline - this.opts.clock.now();
      if (remaining <= 0) return false;
      if (signal?.aborted) throw new AbortedError(`lock ${this.path}`, signal.reason);
      const op = { timeoutMs: remaining, signal };
      try {
        await this.client.ensurePath(this.path, op);
        const node = this.nodeName ?? (await this.createNode(op));
        const children = await this.client.children(this.path, op);
        const pred = findPredecessor(children, node, this.prefix, this.kind);
        if (pred === 'self-missing') {
          this.nodeName = undefined; // our ephemeral vanished (session expiry): contend anew
          continue;
        }
        if (pred === undefined) {
          this.heldNow = true;
          return true;
        }
        if (!blocking) return false;
        // The holder is the first contender; live contenders queued between it and us (another
        // waiter, a pass that times out and queues again) must not shield a dead holder from us.
        const first = sortContenders(children)[0];
        if (breakHolder && first !== undefined && first !== node && (await this.tryBreak(`${this.path}/${first}`, breakHolder, op))) continue;
        if (!(await this.waitGone(`${this.path}/${pred}`, deadline, signal))) return false;
      } catch (err) {
        if (!isZkError(err) || !err.retryable) throw err;
        if (isZkError(err, 'OPERATION_TIMEOUT') && deadline - this.opts.clock.now() <= 0) return false;
        // Connection trouble: wait for the session, then re-check (kazoo's retry loop).
        await this.client.waitConnected({ timeoutMs: Math.max(1, deadline - this.opts.clock.now()), signal }).catch(
          (e: unknown) => {
            if (e instanceof AbortedError) throw e;
          },
        );
      }
    }
  }

  /**
   * Deletes the holder's contender `predPath` when `breakHolder` vouches for it, atomically with
   * its guard ops. True when the contender is gone (deleted now or already), false to wait.
   */
  private async tryBreak(
    predPath: string, breakHolder: NonNullable<AcquireOptions['breakHolder']>, op: { timeoutMs: number; signal: AbortSignal | undefined },
  ): Promise<boolean> {
    const identifier = await this.client.read(predPath, op);
    if (identifier === undefined) return true;
    const guards = await breakHolder({ path: predPath, identifier });
    if (guards === undefined) return false;
    try {
      await this.client.multi([...guards, { type: 'delete', path: predPath }], op);
      return true;
    } catch (err) {
      // Only the delete (the last op) failing with NO_NODE means the contender is gone already.
      if (err instanceof ZkTransactionError && err.code === 'NO_NODE' && err.failedIndex === guards.length) return true;
      if (isZkError(err, 'BAD_VERSION', 'NO_NODE')) return false;
      throw err;
    }
  }

  /**
   * Creates our contender. After a connection loss the create may have succeeded without us
   * hearing back: kazoo's trick — look for a child with our unique prefix before creating again.
   */
  private async createNode(op: { timeoutMs: number; signal: AbortSignal | undefined }): Promise<string> {
    if (this.createTried) {
      const existing = (await this.client.children(this.path, op)).find((c) => c.startsWith(this.prefix));
      if (existing !== undefined) {
        this.nodeName = existing;
        return existing;
      }
    }
    this.createTried = true;
    const created = await this.client.create(`${this.path}/${this.prefix}`, this.identifier, {
      ...op,
      ephemeral: true,
      sequential: true,
    });
    this.nodeName = created.slice(this.path.length + 1);
    return this.nodeName;
  }

  /** Waits until `pred` is gone (true), the deadline passes (false) or the session changes (true). */
  private waitGone(pred: string, deadline: number, signal: AbortSignal | undefined): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      const timer = new AbortController();
      const cleanups: Unsubscribe[] = [];
      const done = (fn: () => void): void => {
        for (const c of cleanups) c();
        timer.abort();
        fn();
      };
      cleanups.push(this.client.watchData(pred, (v) => (v === undefined ? done(() => resolve(true)) : undefined)));
      cleanups.push(this.client.on('connected', () => done(() => resolve(true))));
      const s = anySignal(signal);
      const onAbort = (): void => done(() => reject(new AbortedError(`lock ${this.path}`, s?.reason)));
      s?.addEventListener('abort', onAbort, { once: true });
      cleanups.push(() => s?.removeEventListener('abort', onAbort));
      if (Number.isFinite(deadline)) {
        this.opts.clock
          .sleep(Math.max(0, deadline - this.opts.clock.now()), timer.signal)
          .then(() => done(() => resolve(false)), () => undefined);
      }
    });
  }

  private startMonitor(): void {
    const node = `${this.path}/${this.nodeName ?? ''}`;
    this.monitor = [
      this.client.on('expired', () => this.markLost('session expired')),
      this.client.watchData(node, (v) => (v === undefined ? this.markLost('lock node deleted') : undefined)),
    ];
  }

  private stopMonitor(): void {
    for (const u of this.monitor) u();
    this.monitor = [];
  }

  private markLost(reason: LostReason): void {
    if (!this.heldNow) return;
    this.heldNow = false;
    this.nodeName = undefined;
    this.stopMonitor();
    for (const l of [...this.lostListeners]) l(reason);
  }

  /**
   * Removes our contender node. It is ephemeral, but a live session keeps it for ever, and a
   * leftover contender blocks everyone queued behind it: so, as kazoo's best-effort cleanup, a
   * create whose answer was lost is looked up by our prefix, and a removal that fails on connection
   * trouble is tried again once the session is connected (up to 5 times).
   */
  private async removeNode(): Promise<void> {
    const name = this.nodeName;
    const prefix = this.createTried ? this.prefix : undefined;
    this.nodeName = undefined;
    this.createTried = false;
    if (name === undefined && prefix === undefined) return;
    const attempt = async (): Promise<void> => {
      const target = name ?? (await this.client.children(this.path)).find((c) => c.startsWith(prefix ?? '\u0000'));
      if (target !== undefined) await this.client.delete(`${this.path}/${target}`, { recursive: false, missingOk: true });
    };
    try {
      await attempt();
    } catch (err) {
      if (!isZkError(err)) throw err;
      if (err.retryable) this.cleanupLater(attempt, 5);
    }
  }

  private cleanupLater(attempt: () => Promise<void>, triesLeft: number): void {
    if (triesLeft <= 0) return;
    const run = (): void => void attempt().catch((err: unknown) => {
      if (isZkError(err) && err.retryable) this.cleanupLater(attempt, triesLeft - 1);
    });
    if (this.client.state === 'connected') return run();
    const off = this.client.on('connected', () => {
      off();
      run();
    });
  }
}

/** kazoo `Lock`: exclusive; waits only on earlier `__lock__` contenders. */
export class Lock extends KazooLock {
  constructor(client: ZkClient, path: string, opts: LockOptions) {
    super(client, { path, kind: 'exclusive' }, opts);
  }
}

/** kazoo `ReadLock`: shared with other readers; waits on earlier `__lock__` contenders only. */
export class ReadLock extends KazooLock {
  constructor(client: ZkClient, path: string, opts: LockOptions) {
    super(client, { path, kind: 'read' }, opts);
  }
}

/** kazoo `WriteLock`: waits on earlier `__lock__` and `__rlock__` contenders. */
export class WriteLock extends KazooLock {
  constructor(client: ZkClient, path: string, opts: LockOptions) {
    super(client, { path, kind: 'write' }, opts);
  }
}

/** Builds the lock of an inventory entry (`locks.fence`, `locks.domainState(uuid)`…). */
export function createLock(client: ZkClient, spec: LockSpec, opts: LockOptions): KazooLock {
  return new KazooLock(client, spec, opts);
}
