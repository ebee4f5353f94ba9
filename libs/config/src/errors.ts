/**
 * The one errors module of `@pvc/config`. Every failure to produce a {@link Config} is a
 * {@link ConfigError} carrying every problem found, never only the first.
 *
 * @module
 */
import { PvcError } from '@pvc/runtime';

/** Stable error codes of this package. */
export const ConfigErrorCode = {
  /** The file was read and parsed as YAML, but its content breaks one or more schema rules. */
  Invalid: 'CONFIG_INVALID',
  /** The file could not be found or read, is not valid YAML, or no file path could be determined. */
  Unreadable: 'CONFIG_UNREADABLE',
} as const;

/** One of {@link ConfigErrorCode}'s values. */
export type ConfigErrorCode = (typeof ConfigErrorCode)[keyof typeof ConfigErrorCode];

/**
 * One thing wrong with a configuration.
 *
 * `path` is the dotted key path from the document root (`pvc.system.fencing.ipmi.host`, list items
 * as `pvc.cluster.coordinators[1]`), or the file name for unreadable files. `message` is
 * `expected <what>, got <JSON of the value, or "nothing" when missing>`, or `unknown key`.
 * Password values are never included in a message.
 */
export interface ConfigProblem {
  readonly path: string;
  readonly message: string;
}

/** Renders one problem as the single line operators see: `<path>: <message>`. */
export function formatProblem(problem: ConfigProblem): string {
  return `${problem.path}: ${problem.message}`;
}

/**
 * Raised by `loadConfig`, `parseConfig` and `validateConfig`. Its `message` is every problem, one
 * per line, in the form `<path>: <message>`, so printing `message` alone is a complete report;
 * it is never retryable (the same file gives the same answer).
 */
export class ConfigError extends PvcError {
  /** Stable code: `CONFIG_INVALID` or `CONFIG_UNREADABLE`. */
  declare readonly code: ConfigErrorCode;
  /** Every problem found, in document order where possible; never empty. */
  readonly problems: readonly ConfigProblem[];
  /** Where the configuration came from (a file path, or a caller-chosen name). */
  readonly source: string;

  constructor(
    code: ConfigErrorCode,
    source: string,
    problems: readonly ConfigProblem[],
    options: { cause?: unknown } = {},
  ) {
    super(code, problems.map(formatProblem).join('\n'), { cause: options.cause, retryable: false });
    this.source = source;
    this.problems = Object.freeze(problems.map((p) => Object.freeze({ ...p })));
  }
}
