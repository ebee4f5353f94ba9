import { PvcError } from '@pvc/runtime';

/** A local gRPC call failed: the peer service is down, slow (deadline) or answered with an error. */
export class RpcError extends PvcError {
  constructor(message: string, options: { cause?: unknown; retryable?: boolean } = {}) {
    super('RPC_FAILED', message, options);
  }
}

/** The unix socket could not be bound (directory missing, in use, permissions). */
export class RpcBindError extends PvcError {
  constructor(message: string, cause?: unknown) {
    super('RPC_BIND_FAILED', message, { cause, retryable: false });
  }
}
