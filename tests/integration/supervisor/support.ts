// Runs the real supervisor process (from source, as the test runner runs: --conditions=development
// --import tsx, so its children run from source too) with a temp config against a real Zookeeper.
import { spawn, type ChildProcess } from 'node:child_process';
import { after, before } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeTestConfig } from '@pvc/config/testing';
import { realClock } from '@pvc/runtime';
import { baseKeys, connectZk, paths, type ZkClient } from '@pvc/zk';
import { DELETE } from '@pvc/config/testing';
import { ZkTestServer } from '../../support/zk-server.js';

export const ROOT = new URL('../../../', import.meta.url).pathname;
export const SUPERVISOR_MAIN = join(ROOT, 'apps', 'supervisor', 'src', 'main.ts');

/** A client of the test server. */
export function zkClient(port: number): Promise<ZkClient> {
  return connectZk({ hosts: ['127.0.0.1'], port, clock: realClock, sessionTimeoutMs: 6000 });
}

/** What `pvc cluster init` leaves: the base keys and `/schema/version` = 15. */
export async function initClusterTree(zk: ZkClient): Promise<void> {
  for (const key of baseKeys()) await zk.ensurePath(key);
  await zk.set(paths.schema.version, '15');
}

/**
 * A config for node hv1 (a hypervisor; the coordinator is `localhost` at the test server's port),
 * hypervisor, networking and storage disabled (no libvirt, no host changes), file logging on.
 */
export function supervisorConfig(dir: string, zkPort: number, ipmiPort: number, edits: [string, unknown][] = []): string {
  return writeTestConfig(
    dir,
    ['pvc.node', 'hv1'],
    ['pvc.cluster.coordinators', ['localhost']],
    ['pvc.database', { zookeeper: { port: zkPort } }],
    ['pvc.functions.enable_hypervisor', false],
    ['pvc.functions.enable_networking', false],
    ['pvc.functions.enable_storage', false],
    ['pvc.cluster.networks', DELETE],
    ['pvc.coordinator', DELETE],
    ['pvc.system.configuration.networking', DELETE],
    ['pvc.system.fencing.ipmi.host', '127.0.0.1'],
    ['pvc.system.fencing.ipmi.port', ipmiPort],
    ['pvc.system.configuration.logging.log_colours', false],
    ['pvc.system.configuration.directories.dynamic_directory', join(dir, 'run')],
    ['pvc.system.configuration.directories.log_directory', join(dir, 'log')],
    ['pvc.system.configuration.directories.console_log_directory', join(dir, 'console')],
    ...edits,
  );
}

/** A running supervisor process and its output. */
export interface SupervisorProcess {
  readonly child: ChildProcess;
  readonly startedAt: number;
  output(): string;
  /** Parsed JSON log lines so far. */
  lines(): Record<string, unknown>[];
  readonly exited: Promise<number | null>;
}

/** Spawns the supervisor with `args` (after `--config`), without systemd's variables in its env. */
export function spawnSupervisor(config: string, args: string[] = []): SupervisorProcess {
  const env = { ...process.env };
  delete env.NOTIFY_SOCKET;
  delete env.PVC_EXTERNAL_SERVICES;
  const startedAt = realClock.now();
  const child = spawn(process.execPath, [...process.execArgv, SUPERVISOR_MAIN, '--config', config, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return {
    child,
    startedAt,
    exited,
    output: () => out,
    lines: () =>
      out.split('\n').flatMap((l) => {
        try {
          return [JSON.parse(l) as Record<string, unknown>];
        } catch {
          return [];
        }
      }),
  };
}

/** Whether a pid is alive. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A fresh temp dir and its removal. */
export function tempDir(prefix: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A real Zookeeper with an initialised PVC tree, for the tests of one describe block. */
export interface ZkTree {
  readonly server: ZkTestServer;
  readonly client: ZkClient;
}

/**
 * Starts a Zookeeper with an initialised tree (and `seed`, if given) before the block's tests and
 * stops it after them; the returned object's fields are valid inside the tests.
 */
export function useZkTree(seed?: (client: ZkClient) => Promise<void>): ZkTree {
  let server: ZkTestServer | undefined;
  let client: ZkClient | undefined;
  before(async () => {
    server = await ZkTestServer.start();
    client = await zkClient(server.port);
    await initClusterTree(client);
    await seed?.(client);
  });
  after(async () => {
    await client?.close();
    await server?.destroy();
  });
  return {
    get server() { return defined(server, 'the Zookeeper server'); },
    get client() { return defined(client, 'the Zookeeper client'); },
  };
}

function defined<T>(v: T | undefined, what: string): T {
  if (v === undefined) throw new Error(`${what} is used outside the tests of its describe block`);
  return v;
}
