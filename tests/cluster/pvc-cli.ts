/**
 * The `pvc` command as the cluster tests and the demo use it: the built binary
 * (`apps/cli/dist/main.js`, what `/usr/local/bin/pvc` runs), talking to the harness's Zookeeper
 * ensemble. Every cluster action of the end-to-end tests (init, node ready/flush, vm define/start/
 * migrate/...) goes through it, so the tests drive the cluster the way an administrator does.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = new URL('../../', import.meta.url).pathname;
/** The built CLI entry point. */
export const PVC_BIN = join(ROOT, 'apps/cli/dist/main.js');

/** What one invocation did. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

/** `pvc` bound to one cluster. */
export interface PvcCli {
  /** The shell form of a command, for messages and the demo's "try next" lines. */
  shell(args: readonly string[]): string;
  run(args: readonly string[], opts?: { timeoutMs?: number }): Promise<CliResult>;
  /** Runs and throws (with the output) unless it exits 0; returns stdout. */
  ok(...args: string[]): Promise<string>;
  /** Writes a domain XML to a temp file and defines it: `pvc vm define <file> --target <node> ...`. */
  define(xml: string, target: string, ...extra: string[]): Promise<string>;
}

/** A `pvc` bound to the ensemble `zkConnect` (`host:port,...`). */
export function pvcCli(zkConnect: string): PvcCli {
  const base = ['--zk', zkConnect, '--no-color'];
  const run = (args: readonly string[], opts: { timeoutMs?: number } = {}): Promise<CliResult> =>
    new Promise((resolve) => {
      const t0 = Date.now();
      execFile(process.execPath, [PVC_BIN, ...base, ...args], { timeout: opts.timeoutMs ?? 600_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 124) : 0;
        resolve({ code, stdout, stderr, ms: Date.now() - t0 });
      });
    });
  const cli: PvcCli = {
    shell: (args) => ['pvc', ...base.slice(0, 2), ...args].map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' '),
    run,
    async ok(...args) {
      const r = await run(args);
      if (r.code !== 0) throw new Error(`${cli.shell(args)} → exit ${r.code}: ${r.stderr.trim() || r.stdout.trim()}`);
      return r.stdout;
    },
    async define(xml, target, ...extra) {
      const dir = mkdtempSync(join(tmpdir(), 'pvc-define-'));
      const file = join(dir, `${/<name>([^<]+)<\/name>/.exec(xml)?.[1] ?? 'vm'}.xml`);
      try {
        writeFileSync(file, xml);
        return await cli.ok('vm', 'define', file, '--target', target, ...extra);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
  return cli;
}
