/**
 * The storage request pipe: `pvc storage` asks, cephd on the primary carries out and answers.
 * **Ours** — the original's schema v15 has no such key (its API ran `ceph`/`rbd` itself; older
 * PVC versions had a single `/cmd/ceph` command key). Here every request is its own child, so
 * several CLIs can ask at once:
 *
 * - `/cmd/ceph/req-<10-digit sequence>` = the request JSON ({@link storageRequestJson}), created in
 *   one operation (sequential: the number orders the requests).
 * - `…/claim` = `{"node", "started_ms"}`: created by the cephd that carries it out, with an
 *   ephemeral `…/claim/live` in the same transaction (gone when that cephd's session ends).
 * - `…/answer` = `{"ok", "message", "node", "finished_ms"}`: created once, by the executor.
 *
 * The requester deletes its request after reading the answer; cephd deletes what is left after a
 * bound. See docs/netd-cephd.md "Storage requests".
 *
 * @module
 */
import type { Codec } from './codec.js';
import { ZkDataError } from './errors.js';
import { keySpec, type KeySpec } from './key-spec.js';
import { segment } from './schema.js';
import { POOL_TIERS, type PoolTier } from './ceph-keys.js';
import { parseJsonObject } from './ceph-stats.js';

/** `/cmd` and `/cmd/ceph` (ours). */
export const STORAGE_REQUEST_ROOTS = { cmd: '/cmd', requests: '/cmd/ceph' } as const;

/** Prefix of a request's name; ZK appends the 10-digit sequence. */
export const STORAGE_REQUEST_PREFIX = 'req-';

/** The paths of one request. */
export function storageRequestPaths(id: string) {
  const root = `${STORAGE_REQUEST_ROOTS.requests}/${segment('storage request id', id)}`;
  return { root, claim: `${root}/claim`, live: `${root}/claim/live`, answer: `${root}/answer` } as const;
}

/** What a request asks for. Names are Ceph's pool, image and snapshot names. */
export type StorageRequest =
  | { op: 'pool.add'; pool: string; pgs: number; tier: PoolTier; copies: number; minCopies: number }
  | { op: 'pool.remove'; pool: string }
  | { op: 'pool.set-pgs'; pool: string; pgs: number }
  | { op: 'volume.add'; pool: string; volume: string; sizeBytes: number; force: boolean }
  | { op: 'volume.remove'; pool: string; volume: string }
  | { op: 'volume.resize'; pool: string; volume: string; sizeBytes: number; force: boolean }
  | { op: 'volume.rename'; pool: string; volume: string; newName: string }
  | { op: 'volume.clone'; pool: string; volume: string; newName: string; force: boolean }
  | { op: 'snapshot.add' | 'snapshot.remove' | 'snapshot.rollback'; pool: string; volume: string; snapshot: string };

export type StorageOp = StorageRequest['op'];

/** A stored request: what is asked and who asked (`user@host`, for logs). */
export interface StorageRequestRecord {
  readonly request: StorageRequest;
  readonly client: string;
}

/** `…/claim`. */
export interface StorageClaim {
  readonly node: string;
  readonly startedMs: number;
}

/** `…/answer`: the result (`ok`) or the reason it failed (Ceph's own message where Ceph refused). */
export interface StorageAnswer {
  readonly ok: boolean;
  readonly message: string;
  readonly node: string;
  readonly finishedMs: number;
}

type FieldKind = 'name' | 'count' | 'bytes' | 'tier' | 'flag';

/** JSON field → [request property, kind], per operation. */
const FIELDS: Readonly<Record<StorageOp, readonly (readonly [string, string, FieldKind])[]>> = (() => {
  const pool = ['pool', 'pool', 'name'] as const;
  const volume = ['volume', 'volume', 'name'] as const;
  const force = ['force', 'force', 'flag'] as const;
  const size = ['size_bytes', 'sizeBytes', 'bytes'] as const;
  const newName = ['new_name', 'newName', 'name'] as const;
  const snapshot = [pool, volume, ['snapshot', 'snapshot', 'name']] as const;
  return {
    'pool.add': [pool, ['pgs', 'pgs', 'count'], ['tier', 'tier', 'tier'], ['copies', 'copies', 'count'], ['min_copies', 'minCopies', 'count']],
    'pool.remove': [pool],
    'pool.set-pgs': [pool, ['pgs', 'pgs', 'count']],
    'volume.add': [pool, volume, size, force],
    'volume.remove': [pool, volume],
    'volume.resize': [pool, volume, size, force],
    'volume.rename': [pool, volume, newName],
    'volume.clone': [pool, volume, newName, force],
    'snapshot.add': snapshot,
    'snapshot.remove': snapshot,
    'snapshot.rollback': snapshot,
  };
})();

/** Every operation, in the order of the CLI. */
export const STORAGE_OPS = Object.keys(FIELDS) as StorageOp[];

/**
 * Why `name` cannot be a pool, volume or snapshot name here, or undefined when it can. Refused
 * only what would not reach Ceph as that name: empty, `/` (a ZK path separator and rbd's
 * pool/namespace separator), `.`/`..`, NUL, or a leading `-` (it would be read as an option).
 * Everything else goes to Ceph, which has the last word (its refusal is the answer).
 */
export function storageNameProblem(what: string, name: string): string | undefined {
  if (name === '') return `${what} name is empty`;
  if (name.includes('/')) return `${what} name "${name}" contains "/"`;
  if (name === '.' || name === '..' || name.includes('\0')) return `${what} name "${name}" is not allowed`;
  if (name.startsWith('-')) return `${what} name "${name}" starts with "-" (it would be read as an option)`;
  return undefined;
}

function field(kind: FieldKind, name: string, v: unknown): string | undefined {
  switch (kind) {
    case 'name':
      return typeof v === 'string' ? storageNameProblem(name, v) : `"${name}" is not a string`;
    case 'count':
    case 'bytes':
      return Number.isSafeInteger(v) && (v as number) > 0 ? undefined : `"${name}" is not a positive integer`;
    case 'tier':
      return (POOL_TIERS as readonly unknown[]).includes(v) ? undefined : `"${name}" is not one of ${POOL_TIERS.join('/')}`;
    case 'flag':
      return typeof v === 'boolean' ? undefined : `"${name}" is not true or false`;
  }
}


/** A request that is JSON but not a request: names the first thing wrong. */
export class StorageRequestError extends ZkDataError {
  constructor(key: string, raw: string, readonly problem: string) {
    super(key, raw, `a storage request (${problem})`);
  }
}

function decodeRequest(raw: string, key: string): StorageRequestRecord {
  const o = parseJsonObject(raw, key, 'a storage request (JSON object)');
  const bad = (problem: string): never => {
    throw new StorageRequestError(key, raw, problem);
  };
  if (o.version !== 1) bad(`"version" is ${JSON.stringify(o.version)}, not 1`);
  const op = o.op as StorageOp;
  const fields = typeof op === 'string' ? FIELDS[op] : undefined;
  if (!fields) return bad(`unknown "op" ${JSON.stringify(o.op)}`);
  const request: Record<string, unknown> = { op };
  for (const [json, prop, kind] of fields) {
    const problem = field(kind, json, o[json]);
    if (problem) bad(problem);
    request[prop] = o[json];
  }
  if (op === 'pool.add' && (request.minCopies as number) > (request.copies as number)) bad('"min_copies" is greater than "copies"');
  return { request: request as StorageRequest, client: typeof o.client === 'string' ? o.client : '' };
}

function encodeRequest(r: StorageRequestRecord): string {
  const out: Record<string, unknown> = { version: 1, op: r.request.op };
  const props = r.request as unknown as Record<string, unknown>;
  for (const [json, prop] of FIELDS[r.request.op]) out[json] = props[prop];
  out.client = r.client;
  return JSON.stringify(out);
}

/** The request value; decoding names the first field that is wrong ({@link StorageRequestError}). */
export const storageRequestJson: Codec<StorageRequestRecord> = {
  format: 'a storage request',
  encode: encodeRequest,
  decode: decodeRequest,
};

/** `…/claim`. */
export const storageClaimJson: Codec<StorageClaim> = {
  format: 'a storage request claim',
  encode: (c) => JSON.stringify({ node: c.node, started_ms: c.startedMs }),
  decode: (raw, key) => {
    const o = parseJsonObject(raw, key, 'a storage request claim');
    if (typeof o.node !== 'string' || !Number.isSafeInteger(o.started_ms)) throw new ZkDataError(key, raw, 'a storage request claim');
    return { node: o.node, startedMs: o.started_ms as number };
  },
};

/** `…/answer`. */
export const storageAnswerJson: Codec<StorageAnswer> = {
  format: 'a storage request answer',
  encode: (a) => JSON.stringify({ ok: a.ok, message: a.message, node: a.node, finished_ms: a.finishedMs }),
  decode: (raw, key) => {
    const o = parseJsonObject(raw, key, 'a storage request answer');
    if (typeof o.ok !== 'boolean' || typeof o.message !== 'string' || typeof o.node !== 'string' || !Number.isSafeInteger(o.finished_ms)) {
      throw new ZkDataError(key, raw, 'a storage request answer');
    }
    return { ok: o.ok, message: o.message, node: o.node, finishedMs: o.finished_ms as number };
  },
};

/** The keys of one request. Undefined = absent or unreadable. */
export function storageRequestKeys(id: string) {
  const p = storageRequestPaths(id);
  return {
    root: keySpec<StorageRequestRecord, undefined>(p.root, storageRequestJson, undefined),
    claim: keySpec<StorageClaim, undefined>(p.claim, storageClaimJson, undefined),
    answer: keySpec<StorageAnswer, undefined>(p.answer, storageAnswerJson, undefined),
  } as const satisfies Record<string, KeySpec<unknown, undefined>>;
}

/** The sequence number of a request name (`req-0000000042` → 42); names without one sort last. */
export function storageRequestSeq(id: string): number {
  const m = /(\d+)$/.exec(id);
  return m ? Number(m[1]) : Number.MAX_SAFE_INTEGER;
}

/** Request names in the order they were made. */
export function sortStorageRequests(ids: readonly string[]): string[] {
  return [...ids].sort((a, b) => storageRequestSeq(a) - storageRequestSeq(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/** `pool.add vms`, `volume.add vms/disk0`, `snapshot.add vms/disk0@s1`: for messages and logs. */
export function describeStorageRequest(r: StorageRequest): string {
  if (r.op.startsWith('pool.')) return `${r.op} ${r.pool}`;
  if ('snapshot' in r) return `${r.op} ${r.pool}/${r.volume}@${r.snapshot}`;
  return `${r.op} ${r.pool}/${(r as { volume: string }).volume}`;
}
