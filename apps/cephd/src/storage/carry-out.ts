/**
 * One storage request from its stored JSON to its outcome: decode (bad data is an answered error
 * naming the request, never a crash), read the view, plan, execute. Never throws.
 *
 * @module
 */
import { type ReadRequest, type StorageRequestRecord } from '@pvc/zk';
import { executePlan, reasonOf, type Outcome } from './execute.js';
import { planRequest } from './plan.js';
import { readView, type StorageIo } from './view.js';

/** Carries out one request as read from Zookeeper. */
export async function carryOut(io: StorageIo, id: string, read: ReadRequest): Promise<Outcome> {
  if (!read.ok) return { ok: false, message: `request ${id} cannot be carried out: ${read.problem}` };
  return carryOutRecord(io, read.record);
}

/** Carries out a decoded request. */
export async function carryOutRecord(io: StorageIo, record: StorageRequestRecord): Promise<Outcome> {
  const r = record.request;
  try {
    const planned = planRequest(r, await readView(io, r));
    if (planned.kind === 'refuse') return { ok: false, message: planned.reason };
    return await executePlan(io, planned.plan);
  } catch (err) {
    return { ok: false, message: `${reasonOf(err)} (while reading the current state; nothing was changed)` };
  }
}
