import { describeError, mapLimit, type Logger } from '@pvc/runtime';
import { isZkError } from './errors.js';
import { objectKeys } from './keys.js';
import type { KeySpec } from './keys.js';
import { paths } from './schema.js';
import type { OpOptions, ZkClient, ZkOp } from './types.js';

/** One key created by {@link fillMissingKeys}. */
export interface FilledKey {
  path: string;
  value: string;
}

/** Options of {@link fillMissingKeys}. */
export interface FillOptions {
  signal?: AbortSignal;
  /** How many objects are checked at the same time (default 16). */
  concurrency?: number;
}

type KeysOf = (child: string) => Readonly<Record<string, KeySpec<unknown, unknown>>>;

/** The object kinds the original's schema apply walks, with the parent listing them. */
const KINDS: readonly { kind: string; parent: string; keysOf: KeysOf }[] = [
  { kind: 'node', parent: paths.nodes, keysOf: objectKeys.node },
  { kind: 'VM', parent: paths.domains, keysOf: objectKeys.domain },
  { kind: 'network', parent: paths.networks, keysOf: objectKeys.network },
  { kind: 'OSD', parent: paths.ceph.osds, keysOf: objectKeys.osd },
  { kind: 'pool', parent: paths.ceph.pools, keysOf: objectKeys.pool },
];

/** How often an object is checked again after another writer created one of its keys meanwhile. */
const ATTEMPTS = 3;

/**
 * The start-up fill of the original's schema validation: every v15 key of every node, VM,
 * network, OSD and pool that is absent is created with the original's default (`""`, `300` for
 * `migration_max_downtime`, `default` for a pool's `tier`, `False` for an OSD's `is_split`), each
 * logged once when created. Existing keys are never touched.
 *
 * Contracts:
 * - Each object's missing keys are created in one transaction of creates only, so a key another
 *   writer creates meanwhile aborts it (NODE_EXISTS) instead of being overwritten; the object is
 *   then checked again (up to 3 times).
 * - An object deleted meanwhile (NO_NODE) is skipped.
 * - A failure confined to one object is logged (warn, naming the object) and the pass goes on;
 *   a connection problem (a retryable ZkError) or an abort ends the pass by throwing.
 * - Callers hold the schema WriteLock (`locks.schemaValidate`) like the original, so a hot schema
 *   migration does not run meanwhile; safety against other writers does not depend on it.
 */
export async function fillMissingKeys(zk: ZkClient, logger: Logger, opts: FillOptions = {}): Promise<FilledKey[]> {
  const op: OpOptions = opts.signal ? { signal: opts.signal } : {};
  const filled: FilledKey[] = [];
  for (const { kind, parent, keysOf } of KINDS) {
    const children = await zk.children(parent, op).catch((err: unknown) => {
      if (isZkError(err, 'NO_NODE')) return [] as string[];
      throw err;
    });
    await mapLimit(children, opts.concurrency ?? 16, async (child) => {
      const got = await fillOneObject(zk, kind, child, keysOf, logger, op);
      for (const f of got) {
        logger.info({ key: f.path, value: f.value }, `filled missing key ${f.path} with the original's default`);
        filled.push(f);
      }
    });
  }
  return filled;
}

async function fillOneObject(zk: ZkClient, kind: string, child: string, keysOf: KeysOf, logger: Logger, op: OpOptions): Promise<FilledKey[]> {
  try {
    return await fillObject(zk, Object.values(keysOf(child)), op);
  } catch (err) {
    if (isZkError(err) && err.retryable) throw err;
    if (op.signal?.aborted) throw err;
    logger.warn({ kind, object: child, err: describeError(err) }, `could not fill the missing keys of ${kind} ${child}; it is left as it is`);
    return [];
  }
}

async function fillObject(zk: ZkClient, specs: readonly KeySpec<unknown, unknown>[], op: OpOptions): Promise<FilledKey[]> {
  for (let attempt = 1; ; attempt++) {
    const present = await Promise.all(specs.map((s) => zk.exists(s.path, op)));
    const missing = specs.filter((_, i) => present[i] === undefined);
    if (missing.length === 0) return [];
    const ops: ZkOp[] = missing.map((s) => ({ type: 'create', path: s.path, data: s.fill }));
    try {
      await zk.multi(ops, op);
      return missing.map((s) => ({ path: s.path, value: s.fill }));
    } catch (err) {
      // NO_NODE: the object (the parent of its keys) went away meanwhile.
      if (isZkError(err, 'NO_NODE')) return [];
      // NODE_EXISTS: another writer created one of the keys meanwhile: look again.
      if (!isZkError(err, 'NODE_EXISTS') || attempt >= ATTEMPTS) throw err;
    }
  }
}
