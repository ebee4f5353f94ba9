import type * as grpc from '@grpc/grpc-js';
import { AbortedError } from '@pvc/runtime';
import { toGrpcError } from './errors.js';

/** What every handler receives besides the request message. */
export interface RpcCallContext {
  /**
   * Aborts (reason: an `AbortedError`) when the call is cancelled before the handler has answered:
   * the client cancelled, its deadline passed, the connection dropped or the server shut down.
   * Never aborts after the handler has settled.
   */
  readonly signal: AbortSignal;
  /** The method as the API names it (e.g. `stopAll`). */
  readonly method: string;
}

/** A unary handler: the request and the call's context in, the response (or a rejection) out. */
export type UnaryHandler<Req, Res> = (req: Req, ctx: RpcCallContext) => Promise<Res>;

/**
 * Wraps `fn` as a grpc-js unary handler: `fn` gets the call's cancellation signal; a rejection (or a
 * synchronous throw) is sent through {@link toGrpcError}, so a PvcError keeps its code and retry hint
 * and anything else is INTERNAL with its message only.
 */
export function unaryHandler<Req, Res>(method: string, fn: UnaryHandler<Req, Res>): grpc.handleUnaryCall<Req, Res> {
  return (call, cb) => {
    const abort = new AbortController();
    const onCancelled = (): void => abort.abort(new AbortedError(`gRPC call ${method}`));
    call.once('cancelled', onCancelled);
    if (call.cancelled) onCancelled();
    // grpc-js emits 'cancelled' after every status it sends, an answer included: stop listening first.
    const finish = (): void => void call.removeListener('cancelled', onCancelled);
    new Promise<Res>((resolve) => resolve(fn(call.request, { signal: abort.signal, method }))).then(
      (res) => {
        finish();
        cb(null, res);
      },
      (err: unknown) => {
        finish();
        cb(toGrpcError(err));
      },
    );
  };
}
