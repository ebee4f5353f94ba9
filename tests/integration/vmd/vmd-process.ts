/**
 * Runs a real vmd process (apps/vmd/src/main.ts under tsx) against a harness host's libvirtd and
 * the harness ZK. The config names the node `hv1` and coordinator `hv1` (short hostnames, as the
 * config requires); the harness has no DNS, so vmd runs in a private mount namespace whose
 * /etc/hosts maps the host names to their cluster addresses (root only, like the harness).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeTestConfig, type Edit } from '@pvc/config/testing';

const ROOT = new URL('../../../', import.meta.url).pathname;

/** Options of {@link startVmdProcess}. */
export interface VmdProcessOptions {
  dir: string;
  node: string;
  /** host name → cluster IP, written to the process's own /etc/hosts. */
  hosts: Record<string, string>;
  libvirtUri: string;
  shutdownTimeoutS?: number;
  /** More config edits (`[dotted path, value]`), applied after the defaults above. */
  edits?: readonly Edit[];
  /** Extra environment variables of the process (e.g. UV_THREADPOOL_SIZE). */
  env?: Record<string, string> | undefined;
}

/** A running vmd and its output. */
export interface VmdProcess {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
  socketDir: string;
}

/** Writes the config and starts vmd. */
export function startVmdProcess(o: VmdProcessOptions): VmdProcess {
  const cfg = writeTestConfig(
    o.dir,
    ['pvc.node', o.node],
    ['pvc.cluster.coordinators', [o.node]],
    ['pvc.system.configuration.directories.dynamic_directory', join(o.dir, 'run')],
    ['pvc.system.configuration.directories.log_directory', join(o.dir, 'log')],
    ['pvc.system.configuration.directories.console_log_directory', join(o.dir, 'console')],
    ['pvc.system.configuration.hypervisor.libvirt_uri', o.libvirtUri],
    ['pvc.system.configuration.hypervisor.domain_type', 'qemu'],
    ['pvc.system.configuration.hypervisor.vm_shutdown_timeout', o.shutdownTimeoutS ?? 3],
    ['pvc.system.fencing.intervals.keepalive_interval', 1],
    ...(o.edits ?? []),
  );
  const hostsFile = join(o.dir, 'hosts');
  writeFileSync(hostsFile, ['127.0.0.1 localhost', ...Object.entries(o.hosts).map(([n, ip]) => `${ip} ${n}`), ''].join('\n'));
  const script = 'mount --bind "$0" /etc/hosts && exec "$@"';
  const child = spawn(
    'unshare',
    ['--mount', '--propagation', 'private', '--', 'sh', '-c', script, hostsFile,
      process.execPath, '--conditions=development', '--import', 'tsx', join(ROOT, 'apps/vmd/src/main.ts'), '--config', cfg],
    { stdio: ['ignore', 'pipe', 'pipe'], cwd: ROOT, env: { ...process.env, ...o.env } },
  );
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, output: () => out, exited, socketDir: join(o.dir, 'run') };
}
