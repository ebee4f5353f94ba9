/**
 * Carries out a plan (plan-types.ts): the Ceph steps in order, the reads, then the Zookeeper change
 * in one transaction. Nothing is left half-made: when a step, a read or the Zookeeper write fails,
 * the steps already done are undone in reverse order (a pool or image made by this request is
 * removed again), and for removals, which cannot be undone, Zookeeper is brought in line with what
 * is gone. The answer then carries the failing tool's own message (Ceph's reason) and what was undone.
 *
 * @module
 */
import { describeError } from '@pvc/runtime';
import { isZkError, ZkError, type ZkClient, type ZkOp } from '@pvc/zk';
import { CephCommandError } from '../host/ceph-cli.js';
import type { Plan, PlanStep, ZkChange } from './plan-types.js';
import { cephJson, childrenOf, type StorageIo } from './view.js';

/** How a request ended: the answer's `ok` and `message`. */
export interface Outcome {
  readonly ok: boolean;
  readonly message: string;
}

/** The message of a failure: a Ceph tool's own reason line, else the error described. */
export function reasonOf(err: unknown): string {
  if (err instanceof CephCommandError) return err.reason;
  if (err instanceof ZkError) return `Zookeeper: ${describeError(err)}`;
  return describeError(err);
}

/** Ceph saying that the object is not there. */
function isMissing(err: unknown): boolean {
  return err instanceof CephCommandError && /\(2\) No such file or directory|does not exist/.test(err.reason);
}

async function runStep(io: StorageIo, step: PlanStep): Promise<void> {
  const c = step.run;
  try {
    await io.ceph.text(c.tool, c.args, { timeoutMs: c.long ? io.longTimeoutMs : io.timeoutMs });
  } catch (err) {
    if (!(step.missingOk && isMissing(err))) throw err;
  }
}

/** Delete operations for `root` and everything under it, children first (none when absent). */
async function subtreeDeletes(zk: ZkClient, root: string, timeoutMs: number): Promise<ZkOp[]> {
  if ((await zk.exists(root, { timeoutMs })) === undefined) return [];
  const children = await childrenOf(zk, root, timeoutMs);
  const below = await Promise.all(children.map((c) => subtreeDeletes(zk, `${root}/${c}`, timeoutMs)));
  return [...below.flat(), { type: 'delete', path: root }];
}

/** Applies `change` in one transaction (listing the trees again if one changed meanwhile). */
export async function applyChange(zk: ZkClient, change: ZkChange, timeoutMs: number): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const deletes = (await Promise.all(change.deleteTrees.map((t) => subtreeDeletes(zk, t, timeoutMs)))).flat();
    const ops: ZkOp[] = [
      ...deletes,
      ...change.create.map(([path, data]): ZkOp => ({ type: 'create', path, data })),
      ...change.set.map(([path, data]): ZkOp => ({ type: 'set', path, data })),
    ];
    if (ops.length === 0) return;
    try {
      await zk.multi(ops, { timeoutMs });
      return;
    } catch (err) {
      const raced = isZkError(err, 'NOT_EMPTY') || (isZkError(err, 'NO_NODE') && deletes.length > 0);
      if (!raced || attempt >= 3) throw err;
    }
  }
}

function merged(changes: readonly ZkChange[]): ZkChange {
  return { deleteTrees: changes.flatMap((c) => c.deleteTrees), create: changes.flatMap((c) => c.create), set: changes.flatMap((c) => c.set) };
}

/** Undoes `done` (reverse order) and reflects its removals in Zookeeper; returns what it did, for the answer. */
async function rollback(io: StorageIo, done: readonly PlanStep[]): Promise<string> {
  const notes: string[] = [];
  for (const step of [...done].reverse()) {
    if (!step.undo) continue;
    try {
      await runStep(io, { what: step.undo.what, run: step.undo.run });
      notes.push(`undone: ${step.undo.what}`);
    } catch (err) {
      notes.push(`NOT undone (${step.what}): ${reasonOf(err)}`);
    }
  }
  const reflected = done.flatMap((s) => (s.reflect ? [s.reflect] : []));
  if (reflected.length > 0) {
    try {
      await applyChange(io.zk, merged(reflected), io.zkTimeoutMs);
      notes.push(`already done: ${done.filter((s) => s.reflect).map((s) => s.what).join(', ')}`);
    } catch (err) {
      notes.push(`Zookeeper not updated for what was already removed: ${reasonOf(err)}`);
    }
  }
  return notes.length > 0 ? `; ${notes.join('; ')}` : '';
}

/** Carries out `plan`; never throws (every failure becomes the outcome's message). */
export async function executePlan(io: StorageIo, plan: Plan): Promise<Outcome> {
  const done: PlanStep[] = [];
  for (const step of plan.steps) {
    try {
      await runStep(io, step);
      done.push(step);
    } catch (err) {
      return { ok: false, message: `${reasonOf(err)} (while ${step.what}${await rollback(io, done)})` };
    }
  }
  let stage = 'reading the result';
  try {
    const outputs: unknown[] = [];
    for (const read of plan.reads) outputs.push(await cephJson(io, read));
    stage = 'writing to Zookeeper';
    await applyChange(io.zk, plan.change(outputs), io.zkTimeoutMs);
  } catch (err) {
    return { ok: false, message: `${reasonOf(err)} (while ${stage}${await rollback(io, done)})` };
  }
  return { ok: true, message: plan.done };
}
