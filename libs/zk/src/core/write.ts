import { ZkError } from '../errors.js';
import type { ObjectEntry, WritePair, ZkOp, ZkStat } from '../types.js';

/**
 * The original's write transaction for already-read versions: absent keys are created, present
 * keys are set (no version) then checked at version v+1, so a concurrent change of any key
 * between our read and the commit aborts the whole transaction (BAD_VERSION).
 *
 * Invariant: parents are never created implicitly. A key whose parent is neither present nor
 * created earlier in the same list makes the transaction fail with NO_NODE, as in the original.
 */
export function buildWriteOps(pairs: readonly WritePair[], stats: readonly (ZkStat | undefined)[]): ZkOp[] {
  const ops: ZkOp[] = [];
  pairs.forEach(([path, data], i) => {
    const stat = stats[i];
    if (stat === undefined) {
      ops.push({ type: 'create', path, data });
    } else {
      ops.push({ type: 'set', path, data });
      ops.push({ type: 'check', path, version: stat.version + 1 });
    }
  });
  return ops;
}

/** Joins an object root and a relative key (`''` = the root). */
export function joinPath(root: string, rel: string): string {
  if (rel === '') return root;
  const r = rel.startsWith('/') ? rel.slice(1) : rel;
  return root === '/' ? `/${r}` : `${root}/${r}`;
}

/**
 * Create operations for a whole object: the root first, then every key in the given order, each
 * preceded by its missing intermediate keys (created empty), so it can go into one transaction
 * and appear atomically.
 */
export function buildObjectOps(root: string, entries: readonly ObjectEntry[]): ZkOp[] {
  const data = new Map<string, string>();
  for (const [rel, value] of entries) data.set(joinPath(root, rel), value);
  const below = root === '/' ? '/' : `${root}/`;
  const ordered: string[] = [root];
  const seen = new Set<string>(ordered);
  for (const p of data.keys()) {
    if (p === root) continue;
    if (!p.startsWith(below)) throw new ZkError('BAD_ARGUMENTS', `object key ${p} is not below ${root}`, { path: p });
    for (const q of [...ancestorsOf(p).filter((a) => a.startsWith(below)), p]) {
      if (!seen.has(q)) {
        seen.add(q);
        ordered.push(q);
      }
    }
  }
  return ordered.map((path) => ({ type: 'create' as const, path, data: data.get(path) ?? '' }));
}

/**
 * Delete operations for a subtree listed parents-first: children before parents, so one
 * transaction removes it all or nothing. `version` applies to the top node only.
 */
export function buildDeleteOps(subtree: readonly string[], version: number): ZkOp[] {
  const top = subtree[0];
  return [...subtree]
    .sort((a, b) => depth(b) - depth(a))
    .map((path) => ({ type: 'delete' as const, path, version: path === top ? version : -1 }));
}

/** Parent path of an absolute path (`/` for top-level nodes). */
export function parentOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}

/** Every proper ancestor of `path`, outermost first, excluding `/`. */
export function ancestorsOf(path: string): string[] {
  const out: string[] = [];
  for (let p = parentOf(path); p !== '/'; p = parentOf(p)) out.unshift(p);
  return out;
}

function depth(path: string): number {
  return path === '/' ? 0 : path.split('/').length - 1;
}
