import * as grpc from '@grpc/grpc-js';
import { RpcError } from './errors.js';
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
 * Calls a unary method with a deadline (default {@link DEFAULT_DEADLINE_MS}). Rejects with
 * {@link RpcError} naming the method; UNAVAILABLE and DEADLINE_EXCEEDED are marked retryable.
 */
export function unaryCall<Req, Res>(client: grpc.Client, method: string, req: Req, opts: CallOptions = {}): Promise<Res> {
  const deadlineMs = opts.deadlineMs ?? DEFAULT_DEADLINE_MS;
  const fn = (client as unknown as Record<string, UnaryMethod<Req, Res> | undefined>)[method];
  if (typeof fn !== 'function') return Promise.reject(new RpcError(`no such RPC method ${method}`));
  return new Promise<Res>((resolve, reject) => {
    const call = fn.call(client, req, new grpc.Metadata(), { deadline: Date.now() + deadlineMs }, (err, res) => {
      opts.signal?.removeEventListener('abort', onAbort);
      if (err) {
        const retryable = err.code === grpc.status.UNAVAILABLE || err.code === grpc.status.DEADLINE_EXCEEDED;
        reject(new RpcError(`${method}: ${err.details || grpc.status[err.code]}`, { cause: err, retryable }));
      } else if (res === undefined) {
        reject(new RpcError(`${method}: empty response`));
      } else {
        resolve(res);
      }
    });
    const onAbort = (): void => call.cancel();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
  });
}
