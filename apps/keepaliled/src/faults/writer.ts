/**
 * Storing faults under `/faults/<ID>` exactly as the original's `generate_fault` does
 * (pvc-inventory §1.1, §9): plan the writes as a pure function of the faults that hold now and
 * the IDs already stored, then apply them one fault per transaction.
 *
 * - New fault: one object — root `""`, `first_time` = `last_time` = now, `ack_time` `""`,
 *   `status` `new`, `delta`, `message` — created in one transaction, so no reader sees half of it.
 * - Existing fault: only `last_time`, `delta` and `message` are written; `status`, `ack_time` and
 *   `first_time` are never touched, so an acknowledged fault stays acknowledged.
 * - Faults never clear: a fault whose condition is gone is left as it is (an operator deletes it).
 *
 * @module
 */
import type { Logger } from '@pvc/runtime';
import { describeError, mapLimit } from '@pvc/runtime';
import {
  faultKeys, isZkError, pair, paths, readKeys, type FaultStatus, type ObjectEntry, type WritePair, type ZkClient,
} from '@pvc/zk';
import type { FaultCondition } from './conditions.js';
import { READ_CONCURRENCY } from './facts.js';

/** One stored fault as a pass reads it (bad values already replaced by the key's default). */
export interface StoredFault {
  id: string;
  status: FaultStatus;
  delta: number;
}

/**
 * One planned write. `create` carries the update to send instead if the fault turns out to exist
 * already (created meanwhile by another writer). `invalid`: the ID cannot be a `/faults` child
 * name (nothing is written).
 */
export type FaultWrite =
  | { kind: 'create'; fault: FaultCondition; root: string; entries: ObjectEntry[]; ifExists: WritePair[] }
  | { kind: 'update'; fault: FaultCondition; pairs: WritePair[] }
  | { kind: 'invalid'; fault: FaultCondition; reason: string };

/**
 * The writes for the faults that hold now: `create` for an ID not stored yet, `update` for one
 * that is. Time stamps are `nowMs` in the original's local-time format. Pure.
 */
export function planFaultWrites(active: readonly FaultCondition[], stored: ReadonlySet<string>, nowMs: number): FaultWrite[] {
  return active.map((fault): FaultWrite => {
    let k: ReturnType<typeof faultKeys>;
    try {
      k = faultKeys(fault.id);
    } catch (err) {
      return { kind: 'invalid', fault, reason: describeError(err) };
    }
    const update = updatePairs(k, fault, nowMs);
    if (stored.has(fault.id)) return { kind: 'update', fault, pairs: update };
    const entries: ObjectEntry[] = [
      ['', ''],
      relative(k.root.path, pair(k.firstTime, nowMs)),
      relative(k.root.path, pair(k.lastTime, nowMs)),
      relative(k.root.path, pair(k.ackTime, null)),
      relative(k.root.path, pair(k.status, 'new')),
      relative(k.root.path, pair(k.delta, fault.delta)),
      relative(k.root.path, pair(k.message, fault.message)),
    ];
    return { kind: 'create', fault, root: k.root.path, entries, ifExists: update };
  });
}

function updatePairs(k: ReturnType<typeof faultKeys>, fault: FaultCondition, nowMs: number): WritePair[] {
  return [pair(k.lastTime, nowMs), pair(k.delta, fault.delta), pair(k.message, fault.message)];
}

function relative(root: string, [path, value]: WritePair): ObjectEntry {
  return [path.slice(root.length + 1), value];
}

/** Options of the reads and writes: the pass's signal and logger. */
export interface FaultIoOptions {
  signal?: AbortSignal;
  logger: Logger;
}

/**
 * Reads every stored fault: its status and delta (for the health figure). `first_time` and
 * `ack_time` are read too, only so that a bad value in any key a pass never writes is logged
 * (by the key reader, once per key and value); it is left as it is.
 * Undefined when `/faults` does not exist (a cluster whose schema was never applied).
 */
export async function readStoredFaults(zk: ZkClient, opts: FaultIoOptions): Promise<StoredFault[] | undefined> {
  let ids: string[];
  try {
    ids = await zk.children(paths.faults.root, opts.signal ? { signal: opts.signal } : {});
  } catch (err) {
    if (isZkError(err, 'NO_NODE')) return undefined;
    throw err;
  }
  return mapLimit(ids.sort(), READ_CONCURRENCY, async (id): Promise<StoredFault> => {
    const k = faultKeys(id);
    const [status, delta] = await readKeys(zk, [k.status, k.delta, k.firstTime, k.ackTime], opts);
    return { id, status, delta };
  });
}

/** What applying one write did. */
export type FaultWriteOutcome =
  | { id: string; result: 'created' | 'updated' | 'skipped' }
  | { id: string; result: 'failed'; error: string };

/**
 * Applies the planned writes, one transaction per fault; a failure is logged and the next fault
 * is written all the same. `allowed()` is asked before each write: once it says no (this node
 * is no longer primary) the rest are skipped.
 */
export async function applyFaultWrites(zk: ZkClient, writes: readonly FaultWrite[], allowed: () => boolean, opts: FaultIoOptions): Promise<FaultWriteOutcome[]> {
  const out: FaultWriteOutcome[] = [];
  for (const w of writes) {
    const id = w.fault.id;
    if (w.kind === 'invalid') {
      opts.logger.warn({ fault: id, err: w.reason }, 'fault ID is not a valid Zookeeper name; not written');
      out.push({ id, result: 'failed', error: w.reason });
      continue;
    }
    if (opts.signal?.aborted || !allowed()) {
      out.push({ id, result: 'skipped' });
      continue;
    }
    try {
      out.push({ id, result: await applyOne(zk, w, opts) });
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      const error = describeError(err);
      opts.logger.warn({ fault: id, err: error }, 'could not write fault; the next pass tries again');
      out.push({ id, result: 'failed', error });
    }
  }
  return out;
}

async function applyOne(zk: ZkClient, w: Exclude<FaultWrite, { kind: 'invalid' }>, opts: FaultIoOptions): Promise<'created' | 'updated'> {
  const o = opts.signal ? { signal: opts.signal } : {};
  const { id, delta, message } = w.fault;
  if (w.kind === 'update') {
    await zk.write(w.pairs, o);
    opts.logger.debug({ fault: id, delta }, 'fault updated');
    return 'updated';
  }
  try {
    await zk.createObject(w.root, w.entries, o);
  } catch (err) {
    if (!isZkError(err, 'NODE_EXISTS')) throw err;
    // Created meanwhile (by another writer): it exists now, so it is updated like any other.
    await zk.write(w.ifExists, o);
    opts.logger.info({ fault: id, delta }, 'fault was created meanwhile by another writer; updated');
    return 'updated';
  }
  opts.logger.warn({ fault: id, delta, message }, 'fault raised');
  return 'created';
}

