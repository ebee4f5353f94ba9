/**
 * Reading `rbd lock list --format json` and the address of a lock's holder. Pure.
 */
import { PvcError } from '@pvc/runtime';

/** One lock as `rbd lock list` reports it. */
export interface RbdLock {
  readonly id: string;
  readonly locker: string;
  /** The holder's client address as Ceph prints it, e.g. `10.0.0.1:0/3512345678` ("" when absent). */
  readonly address: string;
}

/** Why one image could not be flushed (never thrown out of `flushLocks`). */
export class LockFlushError extends PvcError {
  constructor(message: string, cause?: unknown) {
    super('RBD_LOCK_FLUSH_FAILED', message, { cause, retryable: true });
  }
}

function asLock(id: unknown, value: unknown): RbdLock | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const lockId = typeof id === 'string' ? id : v.id;
  if (typeof lockId !== 'string' || typeof v.locker !== 'string' || lockId === '' || v.locker === '') return undefined;
  return { id: lockId, locker: v.locker, address: typeof v.address === 'string' ? v.address : '' };
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

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** `a.b.c.d` with each part ≤ 255, leading zeros dropped; or a bracketed IPv6 text lower-cased; else undefined. */
function normaliseIp(text: string): string | undefined {
  const m = IPV4.exec(text);
  if (m) {
    const parts = m.slice(1).map(Number);
    return parts.every((p) => p <= 255) ? parts.join('.') : undefined;
  }
  return /^[0-9a-fA-F:.]+$/.test(text) && text.includes(':') ? text.toLowerCase() : undefined;
}

/** The IP of one entity address: `[v1:|v2:|any:]IP:port/nonce`, IPv6 as `[addr]:port/nonce`. */
function ipOfOne(entry: string): string | undefined {
  const bare = entry.trim().replace(/^(v1|v2|any):/, '').replace(/\/\d+$/, '');
  const v6 = /^\[([^\]]+)\]:\d+$/.exec(bare);
  if (v6) return normaliseIp(v6[1] ?? '');
  const v4 = /^([^:]+):\d+$/.exec(bare);
  return v4 ? normaliseIp(v4[1] ?? '') : undefined;
}

/**
 * The holder IPs of a lock address as Ceph prints it: `10.0.0.1:0/123456`, `v2:10.0.0.1:0/123456`,
 * an address vector `[v2:10.0.0.1:3300/0,v1:10.0.0.1:6789/0]`, or IPv6 `[fd00::1]:0/123`.
 * Empty when the text is not an address (callers treat that as a foreign holder).
 */
export function lockAddressIps(address: string): string[] {
  const text = address.trim();
  const inner = /^\[(.*)\]$/.exec(text);
  // An address vector is bracketed and its entries carry a protocol prefix; `[fd00::1]:0/1` is not one.
  const entries = inner && /^(v1|v2|any):/.test(inner[1] ?? '') ? (inner[1] ?? '').split(',') : [text];
  const ips = entries.map(ipOfOne);
  return ips.every((ip): ip is string => ip !== undefined) ? [...new Set(ips)] : [];
}

/** True when every IP of the lock's address is `ownIp` (this node's storage address). */
export function heldFrom(lock: RbdLock, ownIp: string | undefined): boolean {
  if (ownIp === undefined) return false;
  const own = normaliseIp(ownIp);
  const ips = lockAddressIps(lock.address);
  return own !== undefined && ips.length > 0 && ips.every((ip) => ip === own);
}
