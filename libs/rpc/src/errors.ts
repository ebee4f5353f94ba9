/**
 * The one errors module of `@pvc/rpc`, and the one mapping between {@link PvcError} and gRPC status
 * each way: {@link toGrpcError} (server side) and {@link fromGrpcError} (client side). The code and
 * the retry hint travel as metadata (`pvc-code`, `pvc-retryable`); the status code is chosen so that
 * a client without that metadata still sees something sensible. The table is in README.md.
 *
 * @module
 */
import * as grpc from '@grpc/grpc-js';
import { describeError, PvcError } from '@pvc/runtime';

/** Metadata key carrying {@link PvcError.code} from a server to its client. */
export const PVC_CODE_KEY = 'pvc-code';
/** Metadata key carrying {@link PvcError.retryable} (`true` / `false`). */
export const PVC_RETRYABLE_KEY = 'pvc-retryable';

/** Code of any failure in a handler that was not a {@link PvcError} (a bug, or an unwrapped library error). */
export const INTERNAL_CODE = 'INTERNAL';

/**
 * Client-side codes when the status carries no `pvc-code` (the call never reached a handler, or an
 * old server answered). Everything else is `RPC_<status name>` (e.g. `RPC_UNIMPLEMENTED`).
 */
export const RpcErrorCode = {
  /** Generic: no such method, empty response. */
  Failed: 'RPC_FAILED',
  /** The call's deadline passed before an answer came (retryable). */
  Timeout: 'RPC_TIMEOUT',
  /** Nobody answered on the socket, or the connection broke (retryable). */
  Unavailable: 'RPC_UNAVAILABLE',
  /** Cancelled on this side (the caller's signal aborted). */
  Cancelled: 'RPC_CANCELLED',
} as const;

/** Options of {@link RpcError}. */
export interface RpcErrorOptions {
  cause?: unknown;
  retryable?: boolean;
  /** The handler's code, or one of {@link RpcErrorCode}; default `RPC_FAILED`. */
  code?: string;
  /** gRPC status code of the failed call, when there was one. */
  status?: grpc.status;
  /** The server's message verbatim (no method prefix). */
  remoteMessage?: string;
  /** The method called (e.g. `flushLocks`). */
  method?: string;
}

/**
 * A local gRPC call failed: the peer service is down, slow (deadline) or its handler failed. A
 * handler's {@link PvcError} arrives with the same `code` and `retryable`; `remoteMessage` is its
 * message verbatim and `message` is `<method>: <that message>`.
 */
export class RpcError extends PvcError {
  readonly status: grpc.status | undefined;
  readonly remoteMessage: string | undefined;
  readonly method: string | undefined;

  constructor(message: string, options: RpcErrorOptions = {}) {
    super(options.code ?? RpcErrorCode.Failed, message, options);
    this.status = options.status;
    this.remoteMessage = options.remoteMessage;
    this.method = options.method;
  }
}

/** The unix socket could not be bound (directory missing, in use, permissions). */
export class RpcBindError extends PvcError {
  constructor(message: string, cause?: unknown) {
    super('RPC_BIND_FAILED', message, { cause, retryable: false });
  }
}

/** Status code for a handler's PvcError code; first matching rule wins (README.md has the table). */
const CODE_RULES: readonly (readonly [RegExp, grpc.status])[] = [
  [/^(.+_)?TIMEOUT$/, grpc.status.DEADLINE_EXCEEDED],
  [/^ABORTED$/, grpc.status.CANCELLED],
  [/^((.+_)?NOT_FOUND|NO_NODE|NO_DOMAIN|UNKNOWN_.+)$/, grpc.status.NOT_FOUND],
  [/^.+_EXISTS$/, grpc.status.ALREADY_EXISTS],
  [/^(INVALID_.+|.+_INVALID|BAD_.+)$/, grpc.status.INVALID_ARGUMENT],
  [/^INTERNAL$/, grpc.status.INTERNAL],
];

/** The gRPC status a PvcError with this code and retry hint is sent with. */
export function grpcStatusFor(code: string, retryable: boolean): grpc.status {
  const rule = CODE_RULES.find(([re]) => re.test(code));
  if (rule) return rule[1];
  return retryable ? grpc.status.UNAVAILABLE : grpc.status.FAILED_PRECONDITION;
}

/** Metadata values must be printable ASCII; codes are identifiers, so this only guards against misuse. */
const printable = (s: string): string => s.replace(/[^\x20-\x7e]/g, '?');

/**
 * What a server handler's failure is sent as. A {@link PvcError} keeps its code, message and retry
 * hint; anything else becomes `INTERNAL` with its message only (never a stack trace).
 */
export function toGrpcError(err: unknown): grpc.StatusObject {
  const pvc = err instanceof PvcError;
  const code = pvc ? printable(err.code) : INTERNAL_CODE;
  const retryable = pvc && err.retryable;
  const metadata = new grpc.Metadata();
  metadata.set(PVC_CODE_KEY, code);
  metadata.set(PVC_RETRYABLE_KEY, String(retryable));
  return { code: pvc ? grpcStatusFor(code, retryable) : grpc.status.INTERNAL, details: describeError(err), metadata };
}

/** Client-side code and retry hint for a status without `pvc-code` (see {@link RpcErrorCode}). */
function fromStatusCode(status: grpc.status): { code: string; retryable: boolean } {
  switch (status) {
    case grpc.status.DEADLINE_EXCEEDED:
      return { code: RpcErrorCode.Timeout, retryable: true };
    case grpc.status.UNAVAILABLE:
      return { code: RpcErrorCode.Unavailable, retryable: true };
    case grpc.status.CANCELLED:
      return { code: RpcErrorCode.Cancelled, retryable: false };
    case grpc.status.INTERNAL:
    case grpc.status.UNKNOWN:
    case grpc.status.DATA_LOSS:
      return { code: INTERNAL_CODE, retryable: false };
    default:
      return { code: `RPC_${grpc.status[status] ?? String(status)}`, retryable: false };
  }
}

/** The parts of a failed call's status {@link fromGrpcError} reads (a grpc-js ServiceError has them). */
export interface GrpcStatusLike {
  code: grpc.status;
  details?: string;
  metadata?: grpc.Metadata | null;
}

/**
 * The client-side error for a failed call: the handler's code and retry hint from the metadata
 * when present, else derived from the status code (deadline → retryable `RPC_TIMEOUT`, no server →
 * retryable `RPC_UNAVAILABLE`, …). `method` prefixes the message.
 */
export function fromGrpcError(status: GrpcStatusLike, method?: string): RpcError {
  const [metaCode] = status.metadata?.get(PVC_CODE_KEY) ?? [];
  const [metaRetryable] = status.metadata?.get(PVC_RETRYABLE_KEY) ?? [];
  const mapped =
    typeof metaCode === 'string' && metaCode !== ''
      ? { code: metaCode, retryable: metaRetryable === 'true' }
      : fromStatusCode(status.code);
  const remoteMessage = status.details || (grpc.status[status.code] ?? `status ${status.code}`);
  const message = method ? `${method}: ${remoteMessage}` : remoteMessage;
  return new RpcError(message, { ...mapped, status: status.code, remoteMessage, method, cause: status });
}
