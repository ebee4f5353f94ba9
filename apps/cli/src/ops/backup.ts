import { paths, SCHEMA_VERSION, type WritePair, type ZkClient } from '@pvc/zk';
import { refused, usage } from '../errors.js';

/**
 * Whole-tree backup and restore, as the original's `cluster backup/restore`: a flat JSON object
 * of every key's path and value. Left out: Zookeeper's own `/zookeeper`, Patroni's `/patroni`
 * (not PVC data) and ephemeral nodes (lock contenders of live sessions, meaningless later).
 */

const SKIPPED = new Set(['/zookeeper', '/patroni']);

/** A backup: path → value, parents before children. */
export type Backup = Record<string, string>;

/** Reads the tree below `/` into a backup. */
export async function backupTree(zk: ZkClient): Promise<Backup> {
  const out: Backup = {};
  let level = (await zk.children('/')).map((c) => `/${c}`).filter((p) => !SKIPPED.has(p)).sort();
  while (level.length > 0) {
    const next: string[] = [];
    const read = await Promise.all(level.map(async (path) => {
      // eslint-disable-next-line no-restricted-syntax -- backup dumps raw values
      const snap = await zk.get(path).catch(() => undefined);
      if (!snap || snap.stat.ephemeralOwner !== undefined) return undefined;
      const children = await zk.children(path).catch(() => [] as string[]);
      return { path, data: snap.data, children: children.sort().map((c) => `${path}/${c}`) };
    }));
    for (const r of read) {
      if (!r) continue;
      out[r.path] = r.data;
      next.push(...r.children);
    }
    level = next;
  }
  return out;
}

/** Checks a parsed backup file: a flat object of absolute paths to strings, of our schema. */
export function checkBackup(doc: unknown, source: string): Backup {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw usage(`${source}: not a PVC backup (expected a JSON object of paths to values)`);
  const entries = Object.entries(doc as Record<string, unknown>);
  for (const [k, v] of entries) {
    if (!k.startsWith('/') || k.endsWith('/') || k.includes('//')) throw usage(`${source}: "${k}" is not an absolute Zookeeper path`);
    if (typeof v !== 'string') throw usage(`${source}: the value of ${k} is not a string`);
    if (SKIPPED.has(`/${k.split('/')[1] ?? ''}`)) throw usage(`${source}: ${k} is not PVC data`);
  }
  const version = (doc as Backup)[paths.schema.version];
  if (version === undefined) throw usage(`${source}: not a PVC backup (no ${paths.schema.version})`);
  if (version !== String(SCHEMA_VERSION)) throw refused(`${source} is of schema version ${version}; this cluster speaks ${SCHEMA_VERSION}`);
  return doc as Backup;
}

/** Parents first: by depth, then by path. */
function byDepth(a: string, b: string): number {
  return a.split('/').length - b.split('/').length || (a < b ? -1 : a > b ? 1 : 0);
}

/**
 * Writes every key of the backup (absent keys created, present ones set), in transactions of at
 * most `chunk` keys, parents first. Keys the cluster has and the backup lacks are kept (as the
 * original does). Values go back exactly as the backup holds them (the counterpart of the raw
 * dump above, not through the key table). Returns the number of keys written.
 */
export async function restoreTree(zk: ZkClient, backup: Backup, chunk = 200): Promise<number> {
  const keys = Object.keys(backup).sort(byDepth);
  for (let i = 0; i < keys.length; i += chunk) {
    const pairs: WritePair[] = keys.slice(i, i + chunk).map((k) => [k, backup[k] ?? '']);
    await zk.write(pairs);
  }
  return keys.length;
}
