import type { LockKind } from './schema.js';

/**
 * kazoo's naming rules (`kazoo/recipe/lock.py`): the node name a recipe creates after the
 * contender's uuid4 hex, and the names of earlier contenders that exclude it.
 */
export const LOCK_RECIPES: Readonly<Record<LockKind, { nodeName: string; excludes: readonly string[] }>> = {
  exclusive: { nodeName: '__lock__', excludes: ['__lock__'] },
  read: { nodeName: '__rlock__', excludes: ['__lock__'] },
  write: { nodeName: '__lock__', excludes: ['__lock__', '__rlock__'] },
};

/** kazoo's contender pattern: one of `names`, then a (possibly negative) 10-digit sequence at the end. */
function contenderRe(names: readonly string[]): RegExp {
  return new RegExp(`(?:${names.join('|')})(-?\\d{10})$`);
}

/**
 * The contender `node` must wait for, as kazoo's `_get_predecessor` computes it: among children
 * matching our recipe's exclude names with a smaller sequence (compared as text, like kazoo), the
 * one with the largest sequence. `undefined` = nobody blocks us (we hold the lock);
 * `'self-missing'` = our own node is not among the children (lost with an expired session).
 */
export function findPredecessor(
  children: readonly string[],
  node: string,
  prefix: string,
  kind: LockKind,
): string | undefined | 'self-missing' {
  const re = contenderRe(LOCK_RECIPES[kind].excludes);
  const ours = node.slice(prefix.length);
  let found = false;
  let best: { seq: string; name: string } | undefined;
  for (const child of children) {
    if (child === node) found = true;
    const m = re.exec(child);
    const seq = m?.[1];
    if (seq === undefined || !(seq < ours)) continue;
    if (best === undefined || seq > best.seq) best = { seq, name: child };
  }
  if (!found) return 'self-missing';
  return best?.name;
}

/** All contenders (readers and writers) in lock order, as kazoo's `contenders()` sorts them. */
export function sortContenders(children: readonly string[]): string[] {
  const re = contenderRe(['__lock__', '__rlock__']);
  return children
    .map((name) => ({ name, seq: re.exec(name)?.[1] }))
    .filter((c): c is { name: string; seq: string } => c.seq !== undefined)
    .sort((a, b) => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0))
    .map((c) => c.name);
}
