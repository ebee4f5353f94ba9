/**
 * Freeing the locks on RBD images before a VM is started: list an image's locks, then remove each
 * that may go (pvc-inventory §3.4, §5.3), through the port {@link RbdLockOps}: cephd's long-lived
 * librados/librbd client ({@link radosLockOps}, `host/librados.ts`), or the `rbd` tool
 * (`rbd lock list --format json <img>`, `rbd lock remove <img> <id> <locker>`; {@link cliLockOps}).
 *
 * Two modes, chosen by the caller:
 * - `own` (before a start on this node): only locks held from this node's storage address are
 *   stale and removed. A lock held from any other address may belong to a live writer on another
 *   node: the image is refused, **nothing** on it is removed, and the holder is reported.
 * - `force` (fence recovery, only after the dead node was confirmed off): every lock is removed.
 *
 * Each image is handled on its own: a failure is reported for that image and the others go on.
 */
import { describeError, mapLimit, PvcError, type Exec, type Logger } from '@pvc/runtime';
import { cephReason, cephToolEnv } from './host/ceph-cli.js';
import type { RadosClient } from './host/librados.js';
import { heldFrom, LockFlushError, parseLockList, type RbdLock } from './lock-list.js';

export { LockFlushError, parseLockList, type RbdLock } from './lock-list.js';

/** Which locks may be removed: only this node's stale ones (a start), or all (fence recovery). */
export type FlushMode = 'own' | 'force';

/** A lock held from another address, which an `own` flush refused to break. */
export interface HeldLock {
  image: string;
  lockId: string;
  locker: string;
  address: string;
}

/** Outcome of a flush: images whose locks are all gone, `"<image>: <reason>"` for the others, and the foreign holders. */
export interface FlushResult {
  flushed: string[];
  failed: string[];
  /** Foreign locks that made an image fail in `own` mode (each such image is also in `failed`). */
  held: HeldLock[];
}

/** The port: an image's locks, and removing one. A failure throws with the reason. */
export interface RbdLockOps {
  list(image: string): Promise<RbdLock[]>;
  remove(image: string, lock: RbdLock): Promise<void>;
}

/** Dependencies of {@link flushLocks}. */
export interface LockFlushDeps {
  ops: RbdLockOps;
  logger: Logger;
}

/** What a flush may remove. */
export interface FlushOptions {
  mode: FlushMode;
  /** This node's storage address (`own` mode); undefined = the node has none, so no lock is its own. */
  ownAddress: string | undefined;
}

/** Default deadline of one `rbd` command: an unreachable cluster makes rbd hang, not fail. */
export const RBD_COMMAND_TIMEOUT_MS = 10_000;

/** `pool/volume`, each part a plain RADOS/RBD name; never an option (`-…`) or a snapshot (`@`). */
const IMAGE_NAME = /^[A-Za-z0-9_.][A-Za-z0-9_.+-]*\/[A-Za-z0-9_.][A-Za-z0-9_.+-]*$/;

/** The `rbd` tool's lock commands through Exec, each with `commandTimeoutMs`. */
export function cliLockOps(deps: { exec: Exec; commandTimeoutMs: number; signal?: AbortSignal | undefined }): RbdLockOps {
  async function rbd(args: string[]): Promise<string> {
    const r = await deps.exec.run('rbd', args, { timeoutMs: deps.commandTimeoutMs, signal: deps.signal, env: cephToolEnv() });
    if (r.exitCode !== 0) throw new LockFlushError(`rbd ${args[0]} ${args[1]} failed: ${cephReason('rbd', r.stderr, r.exitCode)}`);
    return r.stdout;
  }
  return {
    list: async (image) => parseLockList(await rbd(['lock', 'list', '--format', 'json', image])),
    remove: async (image, lock) => void (await rbd(['lock', 'remove', image, lock.id, lock.locker])),
  };
}

/** The same through cephd's librados/librbd client (`rbd_list_lockers`, `rbd_break_lock`). */
export function radosLockOps(client: RadosClient): RbdLockOps {
  const wrap = async <T>(what: string, p: Promise<T>): Promise<T> => {
    try {
      return await p;
    } catch (err) {
      throw new LockFlushError(`${what} failed: ${describeError(err)}`, err);
    }
  };
  return {
    list: (image) => wrap('lock list', client.listLocks(image)),
    remove: (image, lock) => wrap('lock remove', client.breakLock(image, lock)),
  };
}

/** An image refused in `own` mode: its foreign holders, named in the reason. Not retryable: the holder may be live. */
export class ForeignLockError extends PvcError {
  constructor(readonly held: readonly HeldLock[], ownAddress: string | undefined) {
    const who = held.map((h) => `${h.locker} at ${h.address || '(no address)'} (lock "${h.lockId}")`).join(', ');
    const own = ownAddress === undefined ? 'this node has no storage address' : `this node's storage address is ${ownAddress}`;
    super('RBD_LOCK_FOREIGN', `locked by ${who}, not by this node (${own}); not removed: another node may still be writing`, { retryable: false });
  }
}

/**
 * Frees the locks of one image as `opts.mode` allows; returns how many were removed. Throws on the
 * first failure, and {@link ForeignLockError} (before removing anything) when an `own` flush finds
 * a lock held from another address.
 */
export async function flushImage(deps: LockFlushDeps, image: string, opts: FlushOptions): Promise<number> {
  if (!IMAGE_NAME.test(image)) throw new LockFlushError('not a pool/volume image name');
  const locks = await deps.ops.list(image);
  if (opts.mode === 'own') {
    const foreign = locks.filter((l) => !heldFrom(l, opts.ownAddress));
    if (foreign.length > 0) throw new ForeignLockError(foreign.map((l) => held(image, l)), opts.ownAddress);
  }
  for (const lock of locks) {
    await deps.ops.remove(image, lock);
    deps.logger.info({ image, lockId: lock.id, locker: lock.locker, address: lock.address, mode: opts.mode }, 'removed RBD lock');
  }
  return locks.length;
}

function held(image: string, lock: RbdLock): HeldLock {
  return { image, lockId: lock.id, locker: lock.locker, address: lock.address };
}

/**
 * Images flushed at once: fence recovery asks for every image of a dead node's VMs in one call, and
 * each image is a few `rbd` processes (~0.1-0.2 s each to start here, mostly waiting on Ceph) or
 * librados calls. koffi runs the latter on 4 worker threads here, so this leaves none to spare
 * while every call waits on a dead OSD; cephd issues its `osd down` before the flush starts.
 */
export const FLUSH_PARALLEL_IMAGES = 4;

/**
 * Flushes the locks of the images, up to {@link FLUSH_PARALLEL_IMAGES} at once, as `opts.mode` allows; results in input order. Never rejects: per-image failures
 * (a foreign holder in `own` mode, rbd missing, timeout, malformed output, a refused removal, a bad
 * name) land in `failed` as `"<image>: <reason>"`, each logged with its reason; foreign holders
 * also in `held`. Duplicate names are handled once.
 */
export async function flushLocks(deps: LockFlushDeps, images: readonly string[], opts: FlushOptions): Promise<FlushResult> {
  const out: FlushResult = { flushed: [], failed: [], held: [] };
  const outcomes = await mapLimit([...new Set(images)], FLUSH_PARALLEL_IMAGES, async (image) => {
    try {
      return { image, removed: await flushImage(deps, image, opts) };
    } catch (err) {
      return { image, err };
    }
  });
  for (const o of outcomes) {
    if (!('err' in o)) {
      out.flushed.push(o.image);
      deps.logger.debug({ image: o.image, removed: o.removed, mode: opts.mode }, 'RBD locks flushed');
      continue;
    }
    const reason = describeError(o.err);
    out.failed.push(`${o.image}: ${reason}`);
    if (o.err instanceof ForeignLockError) {
      out.held.push(...o.err.held);
      deps.logger.warn({ image: o.image, held: o.err.held, ownAddress: opts.ownAddress }, 'RBD lock held by another address: refused, left in place');
    } else {
      deps.logger.warn({ image: o.image, reason, mode: opts.mode }, 'RBD lock flush failed');
    }
  }
  return out;
}
