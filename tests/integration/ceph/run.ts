// One bounded command for the Ceph integration tests (child_process: tests may use it directly).
import { execFile } from 'node:child_process';

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
