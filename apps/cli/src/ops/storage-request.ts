/**
 * `pvc storage pool|volume|snapshot <change>`: the CLI holds no Ceph credentials and runs no
 * `ceph`/`rbd`. It writes a request under `/cmd/ceph` (ours; libs/zk storage-requests.ts) that
 * cephd on the primary carries out and answers, and by default waits for the answer on a watch,
 * bounded by `--wait-timeout`, then deletes the request.
 *
 * - The answer `ok` → its message on stdout (exit 0); not ok → `pvc: <what> failed: <message>`
 *   (exit 1), the message being Ceph's own where Ceph refused.
 * - No answer in time → exit 4 naming the request. A request nobody claimed yet is withdrawn
 *   (deleted in one operation that fails if cephd claimed it meanwhile): nothing was done. A
 *   claimed one is left to finish; its answer stays in Zookeeper until cephd collects it.
 * - `--no-wait`: prints the request's name and returns after writing it.
 *
 * @module
 */
import { hostname } from 'node:os';
import {
  clusterKeys, deleteStorageRequest, describeStorageRequest, readKey, storageRequestKeys, storageRequestPaths, submitStorageRequest,
  watchKey, withdrawStorageRequest, type StorageAnswer, type StorageRequest, type ZkClient,
} from '@pvc/zk';
import type { CliContext } from '../context.js';
import { refused, waitTimeout } from '../errors.js';

/** The request's name and, with a wait, its answer. */
export interface StorageChange {
  id: string;
  answer?: StorageAnswer;
}

/** `pool add vms`, `volume add vms/disk0`, `snapshot add vms/disk0@s1`. */
export function requestTitle(r: StorageRequest): string {
  return describeStorageRequest(r).replace('.', ' ');
}

/** Waits for the answer on watches; resolves undefined when `timeoutS` passes or the user interrupts. */
function answerOrTimeout(ctx: CliContext, zk: ZkClient, id: string, what: string, timeoutS: number): Promise<StorageAnswer | 'unreadable' | undefined> {
  const keys = storageRequestKeys(id);
  const ac = new AbortController();
  const signal = ctx.io.signal ? AbortSignal.any([ac.signal, ctx.io.signal]) : ac.signal;
  return new Promise((resolve) => {
    const stops: (() => void)[] = [];
    const finish = (v: StorageAnswer | 'unreadable' | undefined): void => {
      ac.abort();
      for (const stop of stops) stop();
      resolve(v);
    };
    stops.push(watchKey(zk, keys.answer, (v, snap) => {
      if (snap !== undefined) finish(v ?? 'unreadable');
    }));
    stops.push(watchKey(zk, keys.claim, (v) => {
      if (v) ctx.output.progress(`${what}: cephd on ${v.node} is carrying it out`);
    }));
    void ctx.io.clock.sleep(timeoutS * 1000, signal).then(() => finish(undefined), () => finish(undefined));
  });
}

/** Says where things stand after a wait that ended without an answer (exit 4). */
async function gaveUp(zk: ZkClient, id: string, what: string, timeoutS: number): Promise<never> {
  const head = `storage request ${id} (${what}): no answer after ${timeoutS} s`;
  const outcome = await withdrawStorageRequest(zk, id).catch(() => 'unknown' as const);
  if (outcome === 'withdrawn') {
    const primary = await readKey(zk, clusterKeys.primaryNode).catch(() => 'unknown');
    throw waitTimeout(`${head}; no cephd took it (primary_node: ${primary}), so it was withdrawn: nothing was done`);
  }
  if (outcome === 'claimed') {
    throw waitTimeout(`${head}; cephd is carrying it out and answers at ${storageRequestPaths(id).answer} (kept there until cephd collects it); check with pvc storage ... list`);
  }
  throw waitTimeout(`${head} (${outcome === 'gone' ? 'the request is gone' : 'its state could not be read'})`);
}

/**
 * Writes `request` and (when `waitS` is given) waits for its answer; see the module comment.
 * Returns the request's name; throws the answer's failure (exit 1) or the timeout (exit 4).
 */
export async function storageChange(ctx: CliContext, request: StorageRequest, waitS: number | undefined): Promise<StorageChange> {
  const { zk } = await ctx.cluster();
  const client = `${ctx.io.env.USER ?? ctx.io.env.LOGNAME ?? 'unknown'}@${hostname().split('.')[0] ?? ''}`;
  const id = await submitStorageRequest(zk, { request, client });
  if (waitS === undefined) return { id };
  const what = requestTitle(request);
  ctx.output.progress(`${what}: request ${id} written; waiting for cephd on the primary`);
  const answer = await answerOrTimeout(ctx, zk, id, what, waitS);
  ctx.output.clearProgress();
  if (answer === undefined) return gaveUp(zk, id, what, waitS);
  await deleteStorageRequest(zk, id).catch(() => undefined);
  if (answer === 'unreadable') throw refused(`${what}: the answer at ${storageRequestPaths(id).answer} could not be read`);
  if (!answer.ok) throw refused(`${what} failed: ${answer.message}`);
  return { id, answer };
}
