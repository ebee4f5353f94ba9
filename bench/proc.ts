/**
 * Process figures from /proc for the benchmarks. `USER_HZ` is 100 on Linux/x86_64 (the kernel's
 * clock-tick unit of /proc/<pid>/stat, independent of CONFIG_HZ).
 */
import { readFileSync } from 'node:fs';

const CLK_TCK = 100;

/** The fields of /proc/<pid>/stat after the command name (field 3, the state, is index 0). */
function statFields(pid: number | string): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** utime + stime of a process, seconds (not its waited-for children's). Throws when it is gone. */
export function cpuSeconds(pid: number | string): number {
  const f = statFields(pid);
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
}

/** utime + stime + cutime + cstime of a process, seconds: its own and its waited-for children's. */
export function cpuSecondsWithChildren(pid: number | string): number {
  const f = statFields(pid);
  return [11, 12, 13, 14].reduce((s, i) => s + Number(f[i] ?? 0), 0) / CLK_TCK;
}
