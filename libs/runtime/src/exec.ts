import type * as Execa from 'execa';
import type { ResultPromise } from 'execa';
import type { Logger } from './logger.js';
import { AbortedError, PvcError, TimeoutError } from './errors.js';

/** Result of a finished command. A non-zero exit is a result, not an exception. */
export interface ExecResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export interface ExecOptions {
  /** Kill the command after this many ms and throw {@link TimeoutError}. */
  timeoutMs?: number;
  signal?: AbortSignal;
  input?: string;
  env?: Record<string, string>;
  cwd?: string;
  /** Argument values that must never appear in logs or error messages (passwords). */
  secrets?: readonly string[];
}

/** A long-running child (e.g. `virsh event --loop`): lines of stdout as they arrive. */
export interface ExecChild {
  readonly pid: number | undefined;
  onLine(fn: (line: string) => void): void;
  /** Resolves with the exit code when the child ends. */
  readonly exited: Promise<number>;
  kill(signal?: NodeJS.Signals): void;
}

/** The port through which every OS command runs. */
export interface Exec {
  run(command: string, args: readonly string[], opts?: ExecOptions): Promise<ExecResult>;
  spawn(command: string, args: readonly string[], opts?: ExecOptions): ExecChild;
}

/** Raised when a command cannot be started at all (missing binary, permission). */
export class ExecError extends PvcError {
  constructor(message: string, cause?: unknown) {
    super('EXEC_FAILED', message, { cause, retryable: false });
  }
}

/** Replaces every secret in `text` by `***`. */
export function maskSecrets(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const s of secrets) if (s.length > 0) out = out.split(s).join('***');
  return out;
}

/** Renders a command line for logs, secrets masked. */
export function describeCommand(command: string, args: readonly string[], secrets?: readonly string[]): string {
  return maskSecrets([command, ...args].join(' '), secrets);
}

let execaModule: Promise<typeof Execa> | undefined;

/**
 * execa is loaded on first use (~0.2 s of start-up here): a process that never runs a command —
 * the `pvc` client, which imports this package for its clock and errors — does not pay for it.
 */
function loadExeca(): Promise<typeof Execa> {
  execaModule ??= import('execa');
  return execaModule;
}

/** The real Exec, over execa. */
export function createExec(logger?: Logger): Exec {
  return {
    async run(command, args, opts = {}) {
      const shown = describeCommand(command, args, opts.secrets);
      logger?.debug({ cmd: shown }, 'exec');
      try {
        const { execa } = await loadExeca();
        const r = await execa(command, [...args], {
          reject: false,
          timeout: opts.timeoutMs,
          cancelSignal: opts.signal,
          input: opts.input,
          env: opts.env,
          cwd: opts.cwd,
          stripFinalNewline: false,
        });
        if (r.timedOut) throw new TimeoutError(shown, opts.timeoutMs ?? 0);
        if (r.isCanceled) throw new AbortedError(shown);
        if (r.failed && r.exitCode === undefined) {
          throw new ExecError(`${shown}: ${maskSecrets(r.shortMessage ?? "failed", opts.secrets)}`);
        }
        return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
      } catch (err) {
        if (err instanceof PvcError) throw err;
        throw new ExecError(`${shown}: could not run`, err);
      }
    },
    spawn(command, args, opts = {}) {
      const listeners: ((line: string) => void)[] = [];
      let child: ResultPromise | undefined;
      let killedWith: NodeJS.Signals | undefined;
      const exited = loadExeca().then(({ execa }) => {
        const c = execa(command, [...args], { reject: false, cancelSignal: opts.signal, env: opts.env, cwd: opts.cwd, buffer: false });
        child = c;
        if (killedWith !== undefined) c.kill(killedWith);
        let rest = '';
        c.stdout?.setEncoding('utf8');
        c.stdout?.on('data', (chunk: string) => {
          const parts = (rest + chunk).split('\n');
          rest = parts.pop() ?? '';
          for (const line of parts) for (const l of listeners) l(line);
        });
        return c.then((r) => r.exitCode ?? -1);
      });
      return {
        get pid() {
          return child?.pid;
        },
        onLine: (fn) => listeners.push(fn),
        exited,
        kill: (signal = 'SIGTERM') => {
          if (child) child.kill(signal);
          else killedWith = signal;
        },
      };
    },
  };
}
