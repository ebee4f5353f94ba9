import * as grpc from '@grpc/grpc-js';
import { fromGrpcError, RpcError } from './errors.js';
import { DEFAULT_DEADLINE_MS } from './sockets.js';

/** Every client call has a deadline; a signal cancels it early (shutdown). */
export interface CallOptions {
  deadlineMs?: number;
  signal?: AbortSignal;
}

type UnaryMethod<Req, Res> = (
  req: Req,
  meta: grpc.Metadata,
  opts: grpc.CallOptions,
  cb: (err: grpc.ServiceError | null, res?: Res) => void,
) => grpc.ClientUnaryCall;

/**
 * Calls a unary method with a deadline (default {@link DEFAULT_DEADLINE_MS}); the signal cancels it
 * (the handler's own signal then aborts). Rejects with {@link RpcError} naming the method, through
 * {@link fromGrpcError}: a handler's PvcError keeps its code and retry hint; a passed deadline is
 * the retryable `RPC_TIMEOUT`, no server the retryable `RPC_UNAVAILABLE`, a cancel `RPC_CANCELLED`.
 */
export function unaryCall<Req, Res>(client: grpc.Client, method: string, req: Req, opts: CallOptions = {}): Promise<Res> {
  const deadlineMs = opts.deadlineMs ?? DEFAULT_DEADLINE_MS;
  const fn = (client as unknown as Record<string, UnaryMethod<Req, Res> | undefined>)[method];
  if (typeof fn !== 'function') return Promise.reject(new RpcError(`no such RPC method ${method}`, { method }));
  return new Promise<Res>((resolve, reject) => {
    const call = fn.call(client, req, new grpc.Metadata(), { deadline: Date.now() + deadlineMs }, (err, res) => {
      opts.signal?.removeEventListener('abort', onAbort);
      if (err) {
        reject(fromGrpcError(err, method));
      } else if (res === undefined) {
        reject(new RpcError(`${method}: empty response`, { method }));
      } else {
        resolve(res);
      }
    });
    const onAbort = (): void => call.cancel();
    if (opts.signal?.aborted) onAbort();
    else opts.signal?.addEventListener('abort', onAbort, { once: true });
  });
}
