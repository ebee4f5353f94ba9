/**
 * Base error for every package: a stable `code`, an optional `cause`, and whether retrying can help.
 * Packages define their own subclasses in one errors module each.
 */
export class PvcError extends Error {
  readonly code: string;
  readonly retryable: boolean;

  constructor(code: string, message: string, options: { cause?: unknown; retryable?: boolean } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retryable = options.retryable ?? false;
  }
}

/** Raised by Clock sleeps and Exec runs when the shutdown signal (or another AbortSignal) fires. */
export class AbortedError extends PvcError {
  constructor(what: string, cause?: unknown) {
    super('ABORTED', `${what} was aborted`, { cause, retryable: false });
  }
}

/** Raised when an operation exceeds its deadline. */
export class TimeoutError extends PvcError {
  constructor(what: string, ms: number, cause?: unknown) {
    super('TIMEOUT', `${what} timed out after ${ms} ms`, { cause, retryable: true });
  }
}

/** One line describing an unknown thrown value, for logs and CLI output (never a stack trace). */
export function describeError(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
