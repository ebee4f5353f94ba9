import {
  faultKeys, isZkError, pair, paths, readKeyIfExists, readKeys, type FaultStatus, type WritePair, type ZkClient,
} from '@pvc/zk';
import { refused } from '../errors.js';
import { Problems } from '../problems.js';

/**
 * The cluster's faults as stored under `/faults/<id>` (written by keepaliled on the primary, as
 * the original's health daemon does; inventory §1.1, §9), and what the API did with them: list,
 * acknowledge, delete, and the cluster health they give.
 */

/** A fault as `cluster status` and `cluster fault list` show it. */
export interface Fault {
  id: string;
  status: FaultStatus;
  /** What it takes off the cluster's health: the stored delta, 0 once acknowledged (as the original shows it). */
  delta: number;
  message: string;
  /** Local times as stored (`YYYY-MM-DD HH:MM:SS`); `''` when absent or unreadable. */
  firstReported: string;
  lastReported: string;
  acknowledgedAt: string;
  problems: string[];
}

/** The decoded keys of one fault. */
export interface StoredFault {
  id: string;
  firstTime: number | undefined;
  lastTime: number | undefined;
  ackTime: number | null;
  status: FaultStatus;
  delta: number;
  message: string;
}

/** How a stored fault is shown: acknowledged faults (status `ack`) count 0; times in the stored format. */
export function faultView(f: StoredFault, problems: readonly string[] = []): Fault {
  const k = faultKeys(f.id);
  const time = (ms: number | null | undefined): string => (ms === null || ms === undefined ? '' : k.lastTime.codec.encode(ms));
  return {
    id: f.id, status: f.status, delta: f.status === 'ack' ? 0 : f.delta, message: f.message,
    firstReported: time(f.firstTime), lastReported: time(f.lastTime), acknowledgedAt: time(f.ackTime),
    problems: [...problems],
  };
}

/**
 * The order of the health messages (the original's): by delta, then by last report, both
 * descending (acknowledged faults, at 0, come last); then by ID. The stored time format sorts as text.
 */
export function byHealthImpact(a: Fault, b: Fault): number {
  return b.delta - a.delta || cmp(b.lastReported, a.lastReported) || cmp(a.id, b.id);
}

/** The order of `fault list` (the original's default): the last reported first, then by ID. */
export function byLastReported(a: Fault, b: Fault): number {
  return cmp(b.lastReported, a.lastReported) || cmp(a.id, b.id);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The IDs under `/faults` (none when the key is absent). */
export async function faultIds(zk: ZkClient): Promise<string[]> {
  return (await zk.children(paths.faults.root).catch((err: unknown) => {
    if (isZkError(err, 'NO_NODE')) return [] as string[];
    throw err;
  })).sort();
}

/** Reads one fault; undefined when it does not exist (any more). Bad values are its problems. */
export async function readFault(zk: ZkClient, id: string): Promise<Fault | undefined> {
  const k = faultKeys(id);
  const p = new Problems();
  const [root, [firstTime, lastTime, ackTime, status, delta, message]] = await Promise.all([
    readKeyIfExists(zk, k.root),
    readKeys(zk, [k.firstTime, k.lastTime, k.ackTime, k.status, k.delta, k.message], p.opts),
  ]);
  if (root === undefined) return undefined;
  return faultView({ id, firstTime, lastTime, ackTime, status, delta, message }, p.list);
}

/** Every stored fault, in ID order. */
export async function readFaults(zk: ZkClient): Promise<Fault[]> {
  const faults = await Promise.all((await faultIds(zk)).map((id) => readFault(zk, id)));
  return faults.filter((f): f is Fault => f !== undefined);
}

/**
 * The faults named by `ids` (duplicates once), each of which must exist: an unknown ID is refused
 * (exit 1) naming it (and `after`, e.g. "nothing written"), before anything is written.
 */
export async function findFaults(zk: ZkClient, ids: readonly string[], after = ''): Promise<Fault[]> {
  const wanted = [...new Set(ids)];
  const found = await Promise.all(wanted.map((id) => readFault(zk, id)));
  const unknown = wanted.filter((_, i) => found[i] === undefined);
  if (unknown.length > 0) {
    const known = await faultIds(zk);
    const list = known.length === 0 ? ' (there are no faults)' : ` (faults: ${known.slice(0, 10).join(', ')}${known.length > 10 ? ', …' : ''})`;
    throw refused(`no fault with ID ${unknown.map((id) => `"${id}"`).join(', ')}${list}${after ? `; ${after}` : ''}`);
  }
  return found as Fault[];
}

/** What an acknowledgement did. */
export interface AckResult {
  acked: string[];
  already: string[];
}

/**
 * Acknowledges faults as the original's API does: status `ack` and ack_time = now (local time),
 * last_time, delta and message left as they are; an already acknowledged fault is not written
 * again. One transaction for all of them.
 */
export async function ackFaults(zk: ZkClient, faults: readonly Fault[], nowMs: number): Promise<AckResult> {
  const todo = faults.filter((f) => f.status !== 'ack');
  const pairs: WritePair[] = todo.flatMap((f) => {
    const k = faultKeys(f.id);
    return [pair(k.ackTime, nowMs), pair(k.status, 'ack')];
  });
  if (pairs.length > 0) {
    try {
      await zk.write(pairs);
    } catch (err) {
      if (isZkError(err, 'NO_NODE')) throw refused('a fault was deleted while being acknowledged: nothing written, try again');
      throw err;
    }
  }
  return { acked: todo.map((f) => f.id), already: faults.filter((f) => f.status === 'ack').map((f) => f.id) };
}

/** Deletes faults with everything under them (the original deletes recursively). */
export async function deleteFaults(zk: ZkClient, ids: readonly string[]): Promise<void> {
  for (const id of ids) await zk.delete(faultKeys(id).root.path, { recursive: true, missingOk: true });
}
