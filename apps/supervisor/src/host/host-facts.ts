import { availableParallelism, machine, release } from 'node:os';
import type { Exec } from '@pvc/runtime';
import type { StaticData } from '@pvc/zk';

/** Reads the node's static data (the original's `cpu_count`, `uname -r`, `uname -o`, `uname -m`). */
export type HostFacts = () => Promise<StaticData>;

/** The real facts: CPU count, kernel release and machine from Node, the OS name from `uname -o`. */
export function createHostFacts(exec: Exec): HostFacts {
  return async () => {
    const r = await exec.run('uname', ['-o'], { timeoutMs: 2_000 }).catch(() => undefined);
    const os = r?.exitCode === 0 && r.stdout.trim() !== '' ? r.stdout.trim().replace(/\s+/g, '_') : 'GNU/Linux';
    return { cpuCount: availableParallelism(), kernel: release(), os, arch: machine() };
  };
}
