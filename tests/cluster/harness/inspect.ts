import { existsSync, readdirSync, readFileSync } from 'node:fs';
import type { Exec } from '@pvc/runtime';
import { ClusterError } from './errors.js';
import type { ClusterHost } from './types.js';

/** The last heartbeat number a guest printed to its console log, or undefined if none yet. */
export function lastTick(consoleLog: string, vm: string): number | undefined {
  if (!existsSync(consoleLog)) return undefined;
  const re = new RegExp(`pvc-guest ${vm.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} tick (\\d+)`, 'g');
  let last: number | undefined;
  for (const m of readFileSync(consoleLog, 'utf8').matchAll(re)) last = Number(m[1]);
  return last;
}

/** Names of the running domains of a host (sorted); throws when libvirtd does not answer. */
export async function listRunning(host: ClusterHost): Promise<string[]> {
  const r = await host.virsh(['list', '--name']);
  if (r.exitCode !== 0) throw new ClusterError('CLUSTER_VIRSH', `virsh list on ${host.name}: ${r.stderr.trim()}`);
  return r.stdout.split('\n').map((l) => l.trim()).filter(Boolean).sort();
}

function describeLive(pid: string): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) return undefined; // zombie: not running
    return `${pid} ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim()}`;
  } catch {
    return undefined; // exited meanwhile
  }
}

/**
 * Live (non-zombie) processes belonging to a cluster: those in network namespace `netns`, and/or
 * those whose command line mentions `pathPart` (e.g. the work dir). Each as "pid cmdline".
 */
export async function clusterProcesses(exec: Exec, netns?: string, pathPart?: string): Promise<string[]> {
  const out = new Set<string>();
  if (netns) {
    const r = await exec.run('ip', ['netns', 'pids', netns]);
    for (const pid of r.stdout.split('\n').map((s) => s.trim()).filter(Boolean)) {
      const d = describeLive(pid);
      if (d) out.add(d);
    }
  }
  if (pathPart) {
    for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p) && p !== String(process.pid))) {
      const d = describeLive(pid);
      if (d?.includes(pathPart)) out.add(d);
    }
  }
  return [...out].sort();
}
