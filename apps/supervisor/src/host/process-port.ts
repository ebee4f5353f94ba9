import { spawn } from 'node:child_process';
import { SUPERVISED_ENV } from '@pvc/rpc';

/** How a child service is launched. */
export interface ProcessSpec {
  /** Service name (for logs). */
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
}

/** How a child ended: an exit code, or the signal that killed it; `error` when it never started. */
export interface ProcessExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly error?: string;
}

/** A running child. */
export interface ProcessHandle {
  readonly pid: number | undefined;
  /** Resolves once, when the child has ended (never rejects). */
  readonly exited: Promise<ProcessExit>;
  /** Sends a signal; a no-op once the child has ended. */
  kill(signal: NodeJS.Signals): void;
}

/** The port through which the supervisor starts its children (standalone mode). */
export interface ProcessPort {
  spawn(spec: ProcessSpec): ProcessHandle;
}

/** `exit 1`, `signal SIGKILL`, or the start error: how ListServices and logs describe an exit. */
export function describeExit(e: ProcessExit): string {
  if (e.error !== undefined) return `failed to start: ${e.error}`;
  if (e.signal !== null) return `signal ${e.signal}`;
  return `exit ${e.code ?? -1}`;
}

/**
 * The real port over node:child_process. Each child gets its own process group (so a Ctrl-C in a
 * terminal reaches only the supervisor, which then stops the children in order) and writes to the
 * supervisor's stdout/stderr directly (its lines carry their own `service` field).
 * Each child also gets an IPC channel and `PVC_SUPERVISED=1`: nothing is sent on it, but the kernel
 * closes it when the supervisor dies (even SIGKILL), and serviceMain then stops the child
 * gracefully — no orphans outlive their supervisor.
 */
export function createNodeProcessPort(): ProcessPort {
  return {
    spawn(spec) {
      const child = spawn(spec.command, [...spec.args], {
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        detached: true,
        env: { ...(spec.env ?? process.env), [SUPERVISED_ENV]: '1' },
      });
      const exited = new Promise<ProcessExit>((resolve) => {
        child.once('error', (err) => resolve({ code: null, signal: null, error: err.message }));
        child.once('exit', (code, signal) => resolve({ code, signal }));
      });
      return {
        pid: child.pid,
        exited,
        kill: (signal) => {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
        },
      };
    },
  };
}
