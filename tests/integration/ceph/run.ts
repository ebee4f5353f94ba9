// One bounded command for the Ceph integration tests (child_process: tests may use it directly).
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** How a command ended. `code` is null when it was killed (its deadline passed). */
export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `cmd args` with `env` added to this process's environment; killed after `timeoutMs`. */
export function run(cmd: string, args: readonly string[], opts: { env?: Record<string, string>; timeoutMs: number }): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(cmd, [...args], { env: { ...process.env, ...opts.env }, timeout: opts.timeoutMs, killSignal: 'SIGKILL', maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : null;
      resolve({ code, stdout, stderr: code === null && err ? `${stderr}\n${err.message}` : stderr });
    });
  });
}

/** The pids of the processes named `comm` in network namespace `ns`. */
export async function pidsOf(ns: string, comm: string): Promise<number[]> {
  const r = await run('ip', ['netns', 'pids', ns], { timeoutMs: 5_000 });
  return r.stdout.split(/\s+/).filter(Boolean).map(Number).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === comm;
    } catch {
      return false;
    }
  });
}
