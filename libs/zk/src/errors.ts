import { PvcError } from '@pvc/runtime';

/**
 * Stable codes of {@link ZkError}. Most are Zookeeper's own error names; `OPERATION_TIMEOUT` is also
 * used for our client-side deadlines and `CLOSED` for calls on a closed client.
 */
export const ZK_ERROR_CODES = [
  'NO_NODE',
  'NODE_EXISTS',
  'NOT_EMPTY',
  'BAD_VERSION',
  'NO_CHILDREN_FOR_EPHEMERALS',
  'CONNECTION_LOSS',
  'SESSION_EXPIRED',
  'OPERATION_TIMEOUT',
  'BAD_ARGUMENTS',
  'NO_AUTH',
  'AUTH_FAILED',
  'INVALID_ACL',
  'CLOSED',
  'SYSTEM_ERROR',
  'RUNTIME_INCONSISTENCY',
  'DATA_INCONSISTENCY',
  'MARSHALLING_ERROR',
  'UNIMPLEMENTED',
  'API_ERROR',
] as const;

/** One of {@link ZK_ERROR_CODES}. */
export type ZkErrorCode = (typeof ZK_ERROR_CODES)[number];

/** Codes after which the same call may succeed once the session is (re-)established. */
const RETRYABLE: ReadonlySet<ZkErrorCode> = new Set(['CONNECTION_LOSS', 'SESSION_EXPIRED', 'OPERATION_TIMEOUT']);

/** A failed Zookeeper call. `path` names the znode involved when known. */
export class ZkError extends PvcError {
  declare readonly code: ZkErrorCode;
  readonly path: string | undefined;

  constructor(code: ZkErrorCode, message: string, opts: { path?: string; cause?: unknown; retryable?: boolean } = {}) {
    super(code, message, { cause: opts.cause, retryable: opts.retryable ?? RETRYABLE.has(code) });
    this.path = opts.path;
  }
}

/**
 * A multi-op transaction that was rejected as a whole: nothing of it was applied. `code` is the
 * failing operation's code, `failedIndex` its position in the operation list.
 */
export class ZkTransactionError extends ZkError {
  readonly failedIndex: number;

  constructor(code: ZkErrorCode, failedIndex: number, path: string | undefined, opts: { retryable?: boolean } = {}) {
    super(code, `transaction failed at operation ${failedIndex} (${path ?? '?'}): ${code}`, {
      path,
      retryable: opts.retryable,
    });
    this.failedIndex = failedIndex;
  }
}

/**
 * A value read from ZK does not decode as its key's format. Services log it (key and value are in
 * the message) and skip the object; nothing is written back.
 */
export class ZkDataError extends PvcError {
  declare readonly code: 'ZK_BAD_DATA';
  readonly key: string;
  readonly value: string;
  readonly expected: string;

  constructor(key: string, value: string, expected: string) {
    super('ZK_BAD_DATA', `bad value at ${key}: ${JSON.stringify(value)} is not ${expected}`, { retryable: false });
    this.key = key;
    this.value = value;
    this.expected = expected;
  }
}

/** A schema path builder got an argument that is not a single, non-empty path segment. */
export class ZkPathError extends PvcError {
  declare readonly code: 'ZK_BAD_PATH';

  constructor(what: string, value: string) {
    super('ZK_BAD_PATH', `invalid ${what} for a ZK path segment: ${JSON.stringify(value)}`, { retryable: false });
  }
}

/** Misuse of a lock object (e.g. two concurrent `acquire` calls on the same object). */
export class ZkLockError extends PvcError {
  declare readonly code: 'LOCK_BUSY';

  constructor(message: string) {
    super('LOCK_BUSY', message, { retryable: false });
  }
}

/** True when `err` is a {@link ZkError}, optionally with one of the given codes. */
export function isZkError(err: unknown, ...codes: ZkErrorCode[]): err is ZkError {
  return err instanceof ZkError && (codes.length === 0 || codes.includes(err.code));
}

/** Builds a ZkError from a code and the path involved, with a uniform message. */
export function zkError(code: ZkErrorCode, path?: string, cause?: unknown): ZkError {
  return new ZkError(code, path === undefined ? code : `${code} at ${path}`, { path, cause });
}
