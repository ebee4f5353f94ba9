import { baseKeys, paths, SCHEMA_VERSION, type ZkClient, type ZkOp } from '@pvc/zk';
import { refused } from '../errors.js';

/** The top-level keys a PVC cluster owns (what `init --overwrite` removes). */
export function pvcRoots(): string[] {
  return [...new Set(baseKeys().map((k) => `/${k.split('/')[1] ?? ''}`))];
}

/** Initial values of the base keys (everything else is ""). */
function initialValue(key: string, clusterName: string, selector: string): string {
  const c = paths.config;
  switch (key) {
    case paths.schema.version: return String(SCHEMA_VERSION);
    case c.root: return clusterName;
    case c.maintenance: return 'false';
    case c.primaryNode: return 'none';
    case c.migrationTargetSelector: return selector;
    default: return '';
  }
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
export async function initCluster(zk: ZkClient, opts: { name: string; selector: string; overwrite: boolean }): Promise<InitResult> {
  const present = [];
  for (const root of pvcRoots()) if ((await zk.exists(root)) !== undefined) present.push(root);
  if (present.length > 0 && !opts.overwrite) {
    const version = await zk.read(paths.schema.version);
    throw refused(
      version !== undefined
        ? `the cluster is already initialised (schema version ${version}); "pvc cluster init --overwrite --yes" wipes it`
        : `Zookeeper already holds ${present.join(', ')}; "pvc cluster init --overwrite --yes" replaces them`,
    );
  }
  for (const root of present) await zk.delete(root, { recursive: true, missingOk: true });
  const ops: ZkOp[] = baseKeys().map((path) => ({ type: 'create', path, data: initialValue(path, opts.name, opts.selector) }));
  await zk.multi(ops);
  return { created: ops.length, removed: present };
}
