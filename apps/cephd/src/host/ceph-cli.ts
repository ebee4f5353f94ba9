/**
 * The port through which cephd runs Ceph's own tools (`ceph`, `rbd`, `rados`): one command with a
 * deadline, its JSON or text output, and Ceph's own message when it fails. Every Ceph command of
 * cephd goes through here; the real adapter is {@link createCephCli} over the Exec port (tests use
 * it with `FakeExec`, and the integration tier with a real one-host Ceph).
 *
 * Errors: {@link CephCommandError} (non-zero exit; the message is the tool's own last meaningful
 * stderr line, e.g. `rbd: error opening image x: (2) No such file or directory`), TimeoutError from
 * Exec (Ceph unreachable makes the tools hang, not fail), {@link CephOutputError} (exit 0 but the
 * output is not the JSON asked for).
 */
import { PvcError, type Exec } from '@pvc/runtime';

/** The Ceph tools cephd runs. */
export type CephTool = 'ceph' | 'rbd' | 'rados';

/** Per-command options. */
export interface CephRunOptions {
  timeoutMs: number;
  signal?: AbortSignal | undefined;
}

/** The port. */
export interface CephCli {
  /** Runs `<tool> <args…> --format json` and parses stdout (empty stdout → null). */
  json(tool: CephTool, args: readonly string[], opts: CephRunOptions): Promise<unknown>;
  /** Runs `<tool> <args…>` and returns stdout as text. */
  text(tool: CephTool, args: readonly string[], opts: CephRunOptions): Promise<string>;
}

/** A Ceph tool exited non-zero; `message` carries the tool's own reason. Not retryable by default. */
export class CephCommandError extends PvcError {
  constructor(
    readonly tool: CephTool,
    readonly args: readonly string[],
    readonly exitCode: number,
    readonly reason: string,
  ) {
    super('CEPH_COMMAND_FAILED', `${tool} ${args.slice(0, 3).join(' ')}: ${reason}`, { retryable: false });
  }
}

/** A Ceph tool answered with output that is not the JSON asked for. */
export class CephOutputError extends PvcError {
  constructor(tool: CephTool, args: readonly string[], detail: string) {
    super('CEPH_OUTPUT_MALFORMED', `${tool} ${args.slice(0, 3).join(' ')}: malformed JSON output: ${detail}`, { retryable: true });
  }
}

/**
 * The environment of every Ceph tool cephd runs: librados/librbd log lines kept off stderr
 * (`--log_to_stderr=false --err_to_stderr=false`, after any `CEPH_ARGS` cephd itself was given).
 * Left on, they are written by other threads in pieces of their own and land inside the tool's
 * reason line — seen 40 of 40 times for `rbd create` with a name too long (`rbd: create error: `,
 * a librbd line, a blank line, `(36) File name too long`), so the reason came out cut.
 */
export function cephToolEnv(inherited: string | undefined = process.env['CEPH_ARGS'], extra: Record<string, string> = {}): Record<string, string> {
  const quiet = '--log_to_stderr=false --err_to_stderr=false';
  return { ...extra, CEPH_ARGS: [inherited ?? extra['CEPH_ARGS'], quiet].filter((a) => a !== undefined && a.trim() !== '').join(' ') };
}

/**
 * A whole librados/librbd log line: its time stamp and thread id up to its newline. Each is one
 * write, but it lands anywhere in the tool's own output, even in the middle of its line.
 */
const LOG_LINE = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d+[+-]\d{4} [0-9a-f]+ [^\n]*(\n|$)/g;

/**
 * The line of a Ceph tool's stderr that says why: its own last `<tool>: …` line or a line starting
 * with `Error ` (what `ceph` prints, e.g. `Error EEXIST: pool 'x' already exists`), else the last
 * line. The log lines of other threads are taken out first, wherever they landed (seen: glued to
 * the end of `rbd: create error: (36) File name too long`, and between `rbd: create error: ` and
 * `(36) File name too long`), so the tool's own line is whole again.
 */
export function cephReason(tool: CephTool, stderr: string, exitCode: number): string {
  const own = stderr.replace(LOG_LINE, '');
  const lines = own.split('\n').map((l) => l.trim()).filter((l) => l !== '');
  const found = [...lines].reverse().find((l) => l.startsWith(`${tool}:`) || /^Error [A-Z]+/.test(l));
  const all = stderr.split('\n').map((l) => l.trim()).filter((l) => l !== '');
  return found ?? lines.at(-1) ?? all.at(-1) ?? `exit ${exitCode}`;
}

/**
 * The real adapter over Exec. `env` (e.g. `CEPH_CONF`) is passed to every command, with
 * {@link cephToolEnv}'s `CEPH_ARGS`.
 */
export function createCephCli(exec: Exec, env: Record<string, string> = {}): CephCli {
  const toolEnv = cephToolEnv(undefined, env);
  async function run(tool: CephTool, args: readonly string[], opts: CephRunOptions): Promise<string> {
    const r = await exec.run(tool, args, { timeoutMs: opts.timeoutMs, signal: opts.signal, env: toolEnv });
    if (r.exitCode !== 0) throw new CephCommandError(tool, args, r.exitCode, cephReason(tool, r.stderr, r.exitCode));
    return r.stdout;
  }
  return {
    async json(tool, args, opts) {
      const full = [...args, '--format', 'json'];
      const out = (await run(tool, full, opts)).trim();
      if (out === '') return null;
      try {
        return JSON.parse(out) as unknown;
      } catch (err) {
        throw new CephOutputError(tool, full, `${err instanceof Error ? err.message : String(err)} (${out.slice(0, 80)})`);
      }
    },
    text: run,
  };
}
