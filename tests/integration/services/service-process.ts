// Starts one built service (apps/<svc>/dist/main.js) as a real process with a temp config, waits
// until its socket serves, and stops it with SIGTERM. Used by the per-service integration tests.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeTestConfig } from '@pvc/config/testing';
import { checkHealth, socketPath, unixTarget, type ServiceName } from '@pvc/rpc';
import { waitFor } from '../../cluster/harness/index.js';

const ROOT = new URL('../../../', import.meta.url).pathname;

/** A running service process. */
export interface ServiceProcess {
  readonly dir: string;
  /** gRPC target of its unix socket. */
  readonly target: string;
  readonly pid: number | undefined;
  /** Everything it printed so far (JSON log lines). */
  output(): string;
  /** SIGTERM; resolves with the exit code. */
  stop(): Promise<number | null>;
  /** stop() if still running, then removes the temp directory. */
  cleanup(): Promise<void>;
}

/**
 * Starts `service` with the sample config plus `edits`, in a fresh temp directory; `env` is added to
 * this process's environment (e.g. `CEPH_CONF` for cephd's `rbd`); `prefix` runs node through a
 * wrapper (e.g. `['ip', 'netns', 'exec', ns]`: the service in a namespace, its socket still here).
 */
export async function startService(service: ServiceName, edits: [string, unknown][] = [], env: Record<string, string> = {}, prefix: readonly string[] = []): Promise<ServiceProcess> {
  const main = join(ROOT, 'apps', service, 'dist', 'main.js');
  assert.ok(existsSync(main), `${main} missing: run the build first (npx tsc -b apps/${service})`);
  const dir = mkdtempSync(join(tmpdir(), `pvc-${service}-`));
  const cfg = writeTestConfig(
    dir,
    ['pvc.node', 'hv1'],
    ['pvc.cluster.coordinators', ['hv1', 'hv2', 'hv3']],
    ['pvc.system.configuration.directories.dynamic_directory', join(dir, 'run')],
    ['pvc.system.configuration.directories.log_directory', join(dir, 'log')],
    ['pvc.system.configuration.directories.console_log_directory', join(dir, 'console')],
    // These processes run in this machine's own namespace: netd must not replace its nftables
    // ruleset (netd's firewall is tested in a namespace: tests/integration/netd).
    ['pvc.functions.enable_networking', false],
    ...edits,
  );
  const [cmd, ...pre] = [...prefix, process.execPath];
  const child = spawn(cmd ?? process.execPath, [...pre, main, '--config', cfg], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const target = unixTarget(socketPath(join(dir, 'run'), service));
  const stop = async (): Promise<number | null> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    return exited;
  };
  const proc: ServiceProcess = {
    dir,
    target,
    pid: child.pid,
    output: () => output,
    stop,
    cleanup: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await waitFor(`${service} health SERVING`, 15_000, async () =>
      (await checkHealth(target, '', { deadlineMs: 500 })) === 'SERVING' ? true : undefined, 100);
  } catch (err) {
    await proc.cleanup();
    throw new Error(`${service} did not start: ${String(err)}\n${output}`);
  }
  return proc;
}

/**
 * Parsed JSON log lines of a service whose `msg` matches. Only complete lines: the pipe may have
 * delivered part of the next one. The output arrives after the action that logged it: wait for the
 * lines (waitUntil of tests/support/wait.ts) before asserting on them.
 */
export function logLines(proc: ServiceProcess, msg: RegExp): Record<string, unknown>[] {
  const out = proc.output();
  return out
    .slice(0, out.lastIndexOf('\n') + 1)
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => typeof l.msg === 'string' && msg.test(l.msg));
}
