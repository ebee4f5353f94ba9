/**
 * Standalone sweeper: removes what crashed or interrupted harness runs left behind (processes,
 * network namespaces with their PID/mount namespaces, bridges, veths, work dirs), by cluster name.
 *
 *   node --conditions=development --import tsx tests/cluster/harness/sweep.ts [name…]
 *
 * Without names it sweeps every cluster registered in /run/pvc-cluster plus the default "pvct".
 * createCluster() runs the same sweep (sh/sweep.sh) for its own name before it creates anything.
 */
import { pathToFileURL } from 'node:url';
import { createExec, describeError } from '@pvc/runtime';
import { registeredClusters } from './registry.js';
import { sweepCluster } from './teardown.js';

export { sweepCluster, sweepSync } from './teardown.js';

/** Sweeps the named clusters (default: every registered one and "pvct"); returns the sweeper's log. */
export async function sweep(names: readonly string[] = []): Promise<string> {
  const exec = createExec();
  const targets = names.length > 0 ? [...names] : [...new Set([...(await registeredClusters()), 'pvct'])];
  let out = '';
  for (const name of targets) out += await sweepCluster(name, exec);
  return out;
}

async function main(): Promise<void> {
  if (process.getuid?.() !== 0) throw new Error('sweep.ts must run as root (it deletes namespaces and links)');
  const out = await sweep(process.argv.slice(2));
  process.stdout.write(out.trim() ? `${out.trim()}\n` : 'nothing to sweep\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    process.stderr.write(`sweep failed: ${describeError(err)}\n`);
    process.exit(1);
  });
}
