import { PvcError } from '@pvc/runtime';

/**
 * Exit statuses of `pvc` (documented in `docs/cli.md`). Scripts may rely on them.
 * - 0 success
 * - 1 the cluster refused or failed the change (unknown VM or node, refused transition, a guard,
 *     a `--wait` that saw the change fail, a capability that is not there yet)
 * - 2 usage: bad flags or arguments, unreadable or invalid input file
 * - 3 no cluster: no connection configured, Zookeeper unreachable, tree not initialised
 * - 4 `--wait` gave up: the change did not finish within `--wait-timeout`
 */
export const EXIT = { ok: 0, failed: 1, usage: 2, noCluster: 3, timeout: 4 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error the CLI reports as one line (`pvc: <message>`) with its exit status. */
export class CliError extends PvcError {
  readonly exitCode: ExitCode;

  constructor(exitCode: ExitCode, message: string, options: { cause?: unknown } = {}) {
    super(`CLI_${Object.entries(EXIT).find(([, v]) => v === exitCode)?.[0] ?? 'failed'}`.toUpperCase(), message, options);
    this.exitCode = exitCode;
  }
}

/** The cluster refused or failed the change (exit 1). */
export const refused = (message: string): CliError => new CliError(EXIT.failed, message);
/** Bad arguments or input (exit 2). */
export const usage = (message: string): CliError => new CliError(EXIT.usage, message);
/** No cluster to talk to (exit 3). */
export const noCluster = (message: string, cause?: unknown): CliError => new CliError(EXIT.noCluster, message, { cause });
/** A `--wait` that ran out of time (exit 4). */
export const waitTimeout = (message: string): CliError => new CliError(EXIT.timeout, message);
