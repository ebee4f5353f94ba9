import { baseKeys, clusterKeys, pair, readKeyIfExists, SCHEMA_VERSION, type Selector, type ZkClient, type ZkOp } from '@pvc/zk';
import { refused } from '../errors.js';

/** The top-level keys a PVC cluster owns (what `init --overwrite` removes). */
export function pvcRoots(): string[] {
  return [...new Set(baseKeys().map((k) => `/${k.split('/')[1] ?? ''}`))];
}

/** Initial values of the base keys, encoded through the key table (everything else is ""). */
function initialValues(clusterName: string, selector: Selector): Map<string, string> {
  const c = clusterKeys;
  return new Map([
    pair(c.schemaVersion, SCHEMA_VERSION), pair(c.name, clusterName), pair(c.maintenance, false), pair(c.primaryNode, 'none'),
    pair(c.migrationTargetSelector, selector),
  ]);
}

/** What `init` did. */
export interface InitResult {
  created: number;
  removed: string[];
}

/**
 * Creates the schema v15 base tree in one transaction. An existing cluster is refused unless
 * `overwrite`, which first deletes every PVC top-level key (never `/zookeeper` or `/patroni`).
 */
export async function initCluster(zk: ZkClient, opts: { name: string; selector: Selector; overwrite: boolean }): Promise<InitResult> {
  const present = [];
  for (const root of pvcRoots()) if ((await zk.exists(root)) !== undefined) present.push(root);
  if (present.length > 0 && !opts.overwrite) {
    const version = await readKeyIfExists(zk, clusterKeys.schemaVersion);
    throw refused(
      version !== undefined
        ? `the cluster is already initialised (schema version ${version}); "pvc cluster init --overwrite --yes" wipes it`
        : `Zookeeper already holds ${present.join(', ')}; "pvc cluster init --overwrite --yes" replaces them`,
    );
  }
  for (const root of present) await zk.delete(root, { recursive: true, missingOk: true });
  const initial = initialValues(opts.name, opts.selector);
  const ops: ZkOp[] = baseKeys().map((path) => ({ type: 'create', path, data: initial.get(path) ?? '' }));
  await zk.multi(ops);
  return { created: ops.length, removed: present };
}
