/**
 * Reading and writing the storage request pipe (storage-requests.ts): the requester's submit and
 * withdraw, the executor's claim and answer, and one look at a request's state.
 *
 * @module
 */
import { isZkError, ZkDataError } from './errors.js';
import {
  STORAGE_REQUEST_PREFIX, STORAGE_REQUEST_ROOTS, storageAnswerJson, storageClaimJson, storageRequestJson, storageRequestPaths,
  type StorageAnswer, type StorageClaim, type StorageRequestRecord,
} from './storage-requests.js';
import type { ZkClient } from './types.js';

/**
 * Writes a request as one new sequential child of `/cmd/ceph` (created first if missing) and
 * returns its name (`req-0000000042`).
 */
export async function submitStorageRequest(zk: ZkClient, record: StorageRequestRecord): Promise<string> {
  await zk.ensurePath(STORAGE_REQUEST_ROOTS.requests);
  const path = await zk.create(`${STORAGE_REQUEST_ROOTS.requests}/${STORAGE_REQUEST_PREFIX}`, storageRequestJson.encode(record), { sequential: true });
  return path.slice(STORAGE_REQUEST_ROOTS.requests.length + 1);
}

/** A request as read: decoded, or the reason it cannot be (naming the request's key). */
export type ReadRequest = { ok: true; record: StorageRequestRecord; ctime: number } | { ok: false; problem: string; ctime: number };

/** Reads a request strictly; undefined when it is gone. */
export async function readStorageRequest(zk: ZkClient, id: string): Promise<ReadRequest | undefined> {
  const snap = await zk.get(storageRequestPaths(id).root).catch((err: unknown) => {
    if (isZkError(err, 'NO_NODE')) return undefined;
    throw err;
  });
  if (!snap) return undefined;
  try {
    return { ok: true, record: storageRequestJson.decode(snap.data, storageRequestPaths(id).root), ctime: snap.stat.ctime };
  } catch (err) {
    if (err instanceof ZkDataError) return { ok: false, problem: err.message, ctime: snap.stat.ctime };
    throw err;
  }
}

/** One look at a request: when it was made, whether and by whom it is claimed, and its answer. */
export interface RequestState {
  ctime: number;
  /** The claim; `'unreadable'` when the key holds something else. */
  claim: StorageClaim | 'unreadable' | undefined;
  /** The claimer's session is alive (its ephemeral `claim/live` is there). */
  live: boolean;
  /** The answer with the time it was written; `'unreadable'` as above. */
  answer: { value: StorageAnswer | 'unreadable'; ctime: number } | undefined;
}

async function readOptional<T>(zk: ZkClient, path: string, decode: (raw: string) => T): Promise<{ value: T | 'unreadable'; ctime: number } | undefined> {
  const snap = await zk.get(path).catch((err: unknown) => {
    if (isZkError(err, 'NO_NODE')) return undefined;
    throw err;
  });
  if (!snap) return undefined;
  try {
    return { value: decode(snap.data), ctime: snap.stat.ctime };
  } catch (err) {
    if (err instanceof ZkDataError) return { value: 'unreadable', ctime: snap.stat.ctime };
    throw err;
  }
}

/** Reads a request's state; undefined when the request is gone. */
export async function readStorageRequestState(zk: ZkClient, id: string): Promise<RequestState | undefined> {
  const p = storageRequestPaths(id);
  const root = await zk.exists(p.root);
  if (!root) return undefined;
  const [claim, live, answer] = await Promise.all([
    readOptional(zk, p.claim, (raw) => storageClaimJson.decode(raw, p.claim)),
    zk.exists(p.live),
    readOptional(zk, p.answer, (raw) => storageAnswerJson.decode(raw, p.answer)),
  ]);
  return { ctime: root.ctime, claim: claim?.value, live: live !== undefined, answer };
}

/**
 * Claims a request for this executor: `claim` and the ephemeral `claim/live` in one transaction.
 * False when another executor claimed it first or the request is gone.
 */
export async function claimStorageRequest(zk: ZkClient, id: string, claim: StorageClaim): Promise<boolean> {
  const p = storageRequestPaths(id);
  try {
    await zk.multi([
      { type: 'create', path: p.claim, data: storageClaimJson.encode(claim) },
      { type: 'create', path: p.live, data: '', ephemeral: true },
    ]);
    return true;
  } catch (err) {
    if (isZkError(err, 'NODE_EXISTS', 'NO_NODE')) return false;
    throw err;
  }
}

/**
 * Writes the answer (once: an existing answer is kept) and drops the claim's `live` marker.
 * `written`, `exists` (answered before) or `gone` (the request was deleted).
 */
export async function answerStorageRequest(zk: ZkClient, id: string, answer: StorageAnswer): Promise<'written' | 'exists' | 'gone'> {
  const p = storageRequestPaths(id);
  try {
    await zk.create(p.answer, storageAnswerJson.encode(answer));
  } catch (err) {
    if (isZkError(err, 'NODE_EXISTS')) return 'exists';
    if (isZkError(err, 'NO_NODE')) return 'gone';
    throw err;
  }
  await zk.delete(p.live, { missingOk: true, recursive: false }).catch(() => undefined);
  return 'written';
}

/**
 * Withdraws a request nobody claimed: deletes it only while it has no child (one operation, so
 * it cannot race a claim). `withdrawn`, `claimed` (an executor has it: left in place) or `gone`.
 */
export async function withdrawStorageRequest(zk: ZkClient, id: string): Promise<'withdrawn' | 'claimed' | 'gone'> {
  try {
    await zk.delete(storageRequestPaths(id).root, { recursive: false });
    return 'withdrawn';
  } catch (err) {
    if (isZkError(err, 'NOT_EMPTY')) return 'claimed';
    if (isZkError(err, 'NO_NODE')) return 'gone';
    throw err;
  }
}

/** Deletes a request with everything under it (an answer that was read, or garbage). */
export async function deleteStorageRequest(zk: ZkClient, id: string): Promise<void> {
  await zk.delete(storageRequestPaths(id).root, { recursive: true, missingOk: true });
}
