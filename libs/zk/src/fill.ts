import type { Logger } from '@pvc/runtime';
import { isZkError } from './errors.js';
import { objectKeys } from './keys.js';
import type { KeySpec } from './keys.js';
import { paths } from './schema.js';
import type { ZkClient, ZkOp } from './types.js';

/** One key created by {@link fillMissingKeys}. */
export interface FilledKey {
  path: string;
  value: string;
}

/**
 * The start-up fill of the original's schema validation: every v15 key of every node, VM and
 * network that is absent is created with the original's default (`""`, or `300` for
 * `migration_max_downtime`), each logged once. Existing keys are never touched. Each object's
 * missing keys are created in one transaction of creates only, so a key another writer creates
 * meanwhile aborts it instead of being overwritten (then the object is checked again, up to 3
 * times); an object deleted meanwhile is skipped.
 */
export async function fillMissingKeys(zk: ZkClient, logger: Logger): Promise<FilledKey[]> {
  const kinds = [
    { parent: paths.nodes, keysOf: objectKeys.node },
    { parent: paths.domains, keysOf: objectKeys.domain },
    { parent: paths.networks, keysOf: objectKeys.network },
  ];
  const filled: FilledKey[] = [];
  for (const { parent, keysOf } of kinds) {
    const children = await zk.children(parent).catch((err: unknown) => {
      if (isZkError(err, 'NO_NODE')) return [] as string[];
      throw err;
    });
    const results = await Promise.all(children.map((child) => fillObject(zk, Object.values(keysOf(child)))));
    for (const r of results) filled.push(...r);
  }
  for (const f of filled) logger.info({ key: f.path, value: f.value }, `filled missing key ${f.path} with the original's default`);
  return filled;
}

async function fillObject(zk: ZkClient, specs: readonly KeySpec<unknown, unknown>[]): Promise<FilledKey[]> {
  for (let attempt = 0; ; attempt++) {
    const present = await Promise.all(specs.map((s) => zk.exists(s.path)));
    const missing = specs.filter((_, i) => present[i] === undefined);
    if (missing.length === 0) return [];
    const ops: ZkOp[] = missing.map((s) => ({ type: 'create', path: s.path, data: s.fill }));
    try {
      await zk.multi(ops);
      return missing.map((s) => ({ path: s.path, value: s.fill }));
    } catch (err) {
      // NODE_EXISTS: someone created a key meanwhile; NO_NODE: the object went away.
      if (isZkError(err, 'NO_NODE')) return [];
      if (!isZkError(err, 'NODE_EXISTS') || attempt >= 2) throw err;
    }
  }
}
