import { fileURLToPath } from 'node:url';
import { describeCommand, realClock } from '@pvc/runtime';
import type { Exec, ExecOptions, ExecResult } from '@pvc/runtime';
import { ClusterError } from './errors.js';

/** Directory of the harness shell scripts (host power switch, BMC, chassis control, sweeper). */
export const SH_DIR = fileURLToPath(new URL('./sh/', import.meta.url)).replace(/\/$/, '');
export const HOST_POWER_SH = `${SH_DIR}/host-power.sh`;
export const BMC_SH = `${SH_DIR}/bmc.sh`;
export const SWEEP_SH = `${SH_DIR}/sweep.sh`;
export const CHASSIS_CONTROL_SH = `${SH_DIR}/chassis-control.sh`;

/** Runs a command and throws ClusterError (with its output) when it exits non-zero. */
export async function runOk(
  exec: Exec,
  code: string,
  cmd: string,
  args: readonly string[],
  opts: ExecOptions = {},
): Promise<ExecResult> {
  const r = await exec.run(cmd, args, { timeoutMs: 60_000, ...opts });
  if (r.exitCode !== 0) {
    const out = `${r.stderr}${r.stdout}`.trim().split('\n').slice(-15).join('\n');
    throw new ClusterError(code, `${describeCommand(cmd, args, opts.secrets)} exited ${r.exitCode}: ${out}`);
  }
  return r;
}

/**
 * Polls `probe` until it returns a value other than undefined, or fails after `timeoutMs` with a
 * ClusterError saying what was awaited and the last probe error.
 */
export async function waitFor<T>(
  what: string,
  timeoutMs: number,
  probe: () => Promise<T | undefined>,
  intervalMs = 250,
): Promise<T> {
  const deadline = realClock.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (realClock.now() >= deadline) {
      const why = last instanceof Error ? `: last error: ${last.message}` : '';
      throw new ClusterError('CLUSTER_TIMEOUT', `timed out after ${timeoutMs} ms waiting for ${what}${why}`);
    }
    await realClock.sleep(intervalMs);
  }
}
