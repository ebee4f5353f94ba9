/**
 * Force-removal of every lock on RBD images, as before restarting a VM whose node was fenced
 * (pvc-inventory §3.4): `rbd lock list --format json <img>`, then `rbd lock remove <img> <id>
 * <locker>` for each lock. Each image is handled on its own: a failure is reported for that image
 * and the others go on.
 */
import { describeError, PvcError, type Exec, type Logger } from '@pvc/runtime';

/** One lock as `rbd lock list` reports it. */
export interface RbdLock {
  readonly id: string;
  readonly locker: string;
}

/** Outcome of a flush: images whose locks are all gone, and `"<image>: <reason>"` for the others. */
export interface FlushResult {
  flushed: string[];
  failed: string[];
}

/** Why one image could not be flushed (never thrown out of {@link flushLocks}). */
export class LockFlushError extends PvcError {
  constructor(message: string, cause?: unknown) {
    super('RBD_LOCK_FLUSH_FAILED', message, { cause, retryable: true });
  }
}

/** Dependencies of {@link flushLocks}. */
export interface LockFlushDeps {
  exec: Exec;
  logger: Logger;
  /** Deadline of each `rbd` command. */
  commandTimeoutMs: number;
  signal?: AbortSignal;
}

/** Default deadline of one `rbd` command: an unreachable cluster makes rbd hang, not fail. */
export const RBD_COMMAND_TIMEOUT_MS = 10_000;

/** `pool/volume`, each part a plain RADOS/RBD name; never an option (`-…`) or a snapshot (`@`). */
const IMAGE_NAME = /^[A-Za-z0-9_.][A-Za-z0-9_.+-]*\/[A-Za-z0-9_.][A-Za-z0-9_.+-]*$/;

function asLock(id: unknown, value: unknown): RbdLock | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const lockId = typeof id === 'string' ? id : v.id;
  if (typeof lockId !== 'string' || typeof v.locker !== 'string' || lockId === '' || v.locker === '') return undefined;
  return { id: lockId, locker: v.locker };
}

/**
 * Parses `rbd lock list --format json` output. Accepts both layouts Ceph has used: an array of
 * `{id, locker, address}` (Octopus and later) and an object keyed by lock id with
 * `{locker, address}` (Nautilus and earlier). Empty output means no locks. Throws
 * {@link LockFlushError} on anything else.
 */
export function parseLockList(stdout: string): RbdLock[] {
  const text = stdout.trim();
  if (text === '') return [];
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new LockFlushError(`rbd lock list printed malformed JSON: "${text.slice(0, 60)}"`);
  }
  if (typeof doc !== 'object' || doc === null) {
    throw new LockFlushError(`rbd lock list printed ${JSON.stringify(doc)}, not a list of locks`);
  }
  const entries: [unknown, unknown][] = Array.isArray(doc) ? doc.map((v: unknown) => [undefined, v]) : Object.entries(doc);
  return entries.map(([id, v]) => {
    const lock = asLock(id, v);
    if (!lock) throw new LockFlushError(`rbd lock list printed a lock without id/locker: ${JSON.stringify(v).slice(0, 80)}`);
    return lock;
  });
}

async function rbd(deps: LockFlushDeps, args: string[]): Promise<string> {
  const r = await deps.exec.run('rbd', args, { timeoutMs: deps.commandTimeoutMs, signal: deps.signal });
  if (r.exitCode !== 0) {
    const detail = (r.stderr.trim().split('\n').pop() ?? '').trim() || `exit ${r.exitCode}`;
    throw new LockFlushError(`rbd ${args[0]} ${args[1]} failed: ${detail}`);
  }
  return r.stdout;
}

/** Removes every lock of one image; returns how many were removed. Throws on the first failure. */
export async function flushImage(deps: LockFlushDeps, image: string): Promise<number> {
  if (!IMAGE_NAME.test(image)) throw new LockFlushError('not a pool/volume image name');
  const locks = parseLockList(await rbd(deps, ['lock', 'list', '--format', 'json', image]));
  for (const lock of locks) {
    await rbd(deps, ['lock', 'remove', image, lock.id, lock.locker]);
    deps.logger.info({ image, lockId: lock.id, locker: lock.locker }, 'removed RBD lock');
  }
  return locks.length;
}

/**
 * Flushes the locks of each image in turn. Never rejects: per-image failures (rbd missing, timeout,
 * malformed output, a refused removal, a bad name) land in `failed` as `"<image>: <reason>"`.
 * Duplicate names are handled once.
 */
export async function flushLocks(deps: LockFlushDeps, images: readonly string[]): Promise<FlushResult> {
  const out: FlushResult = { flushed: [], failed: [] };
  for (const image of [...new Set(images)]) {
    try {
      const removed = await flushImage(deps, image);
      out.flushed.push(image);
      deps.logger.debug({ image, removed }, 'RBD locks flushed');
    } catch (err) {
      const reason = describeError(err);
      out.failed.push(`${image}: ${reason}`);
      deps.logger.warn({ image, reason }, 'RBD lock flush failed');
    }
  }
  return out;
}
