import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { realClock } from '@pvc/runtime';
import type { Exec } from '@pvc/runtime';
import { ClusterError } from './errors.js';
import { clusterProcesses } from './inspect.js';
import { runOk, SWEEP_SH } from './run.js';

/**
 * Clusters this process must tear down if it exits, is interrupted or terminated before their
 * destroy(). Process-wide by nature (signal handlers are), hence module state.
 */
const live = new Set<string>();
let installed = false;

/** Synchronous sweep, usable from an 'exit' handler. Returns the sweeper's output. */
export function sweepSync(name: string): string {
  const r = spawnSync('bash', [SWEEP_SH, name], { encoding: 'utf8', timeout: 60_000 });
  return `${r.stdout ?? ''}${r.stderr ?? ''}`;
}

/** Sweeps a cluster by name (see sh/sweep.sh): kills, deletes namespaces and links, removes the work dir. */
export async function sweepCluster(name: string, exec: Exec): Promise<string> {
  return (await runOk(exec, 'CLUSTER_SWEEP', 'bash', [SWEEP_SH, name], { timeoutMs: 120_000 })).stdout;
}

function sweepAllLive(): void {
  for (const name of live) {
    process.stderr.write(`pvc test cluster "${name}": tearing down on exit\n${sweepSync(name)}`);
  }
  live.clear();
}

function onSignal(signal: NodeJS.Signals): void {
  sweepAllLive();
  process.exit(signal === 'SIGINT' ? 130 : 143);
}

/** Tears the cluster down if the process exits, crashes, or gets SIGINT/SIGTERM before destroy(). */
export function guardCluster(name: string): void {
  live.add(name);
  if (installed) return;
  installed = true;
  process.on('exit', sweepAllLive);
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}

/** Forgets a cluster that was destroyed; removes the handlers when none is left. */
export function unguardCluster(name: string): void {
  live.delete(name);
  if (live.size > 0 || !installed) return;
  installed = false;
  process.off('exit', sweepAllLive);
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
}

/** True for the names the harness gives namespaces and links of cluster `name` (as sh/sweep.sh). */
export function isClusterIfName(name: string, ifname: string): boolean {
  return new RegExp(`^${name}-(hv[0-9]+|cluster|storage|upstream|ipmi|[0-9]+-[csui])$`).test(ifname);
}

/** Lists what is left of a cluster: namespaces, links, live processes naming the work dir, the work dir. */
export async function leftovers(name: string, workDir: string, exec: Exec): Promise<string[]> {
  const out: string[] = [];
  const ns = (await runOk(exec, 'CLUSTER_SWEEP', 'ip', ['netns', 'list'])).stdout.split('\n').map((l) => l.split(' ')[0] ?? '');
  for (const n of ns.filter((x) => isClusterIfName(name, x))) out.push(`network namespace ${n}`);
  const links = (await runOk(exec, 'CLUSTER_SWEEP', 'ip', ['-o', 'link', 'show'])).stdout
    .split('\n')
    .map((l) => (l.split(': ')[1] ?? '').split('@')[0] ?? '');
  for (const l of links.filter((x) => isClusterIfName(name, x))) out.push(`link ${l}`);
  for (const p of await clusterProcesses(exec, undefined, `${workDir}/`)) out.push(`process ${p}`);
  if (existsSync(workDir)) out.push(`work dir ${workDir}`);
  return out;
}

/** Sweeps, then fails loudly if anything survived. */
export async function destroyByName(name: string, workDir: string, exec: Exec): Promise<void> {
  await sweepCluster(name, exec);
  unguardCluster(name);
  // Parents of killed processes (e.g. the BMC's waiting wrapper) need a moment to exit.
  let left = await leftovers(name, workDir, exec);
  for (let i = 0; i < 20 && left.length > 0; i++) {
    await realClock.sleep(250);
    left = await leftovers(name, workDir, exec);
  }
  if (left.length > 0) {
    throw new ClusterError('CLUSTER_TEARDOWN', `cluster "${name}" not fully torn down; left: ${left.join(', ')}`);
  }
}
