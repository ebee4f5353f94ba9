import * as grpc from '@grpc/grpc-js';
import { unaryCall, type CallOptions } from './call.js';
import { unaryHandler, type RpcCallContext } from './handler.js';
import { loadProto, serviceClient } from './proto.js';

/**
 * A local gRPC API as TypeScript: each method takes the request message and resolves to the
 * response message (camelCase fields, as the proto loader maps them).
 */
export type RpcApi = { [method: string]: (req: never) => Promise<unknown> };

/** Where an API lives: its .proto (relative to PROTO_ROOT) and the dotted service name. */
export interface RpcServiceDef<A extends RpcApi> {
  readonly proto: string;
  readonly service: string;
  /** Only for typing: never set. */
  readonly _api?: A;
}

/**
 * The server side of an API: each method also receives the call's {@link RpcCallContext} (its
 * cancellation signal). A handler may leave the context out when it has no use for it.
 */
export type RpcHandlers<A extends RpcApi> = {
  [K in keyof A]: (req: Parameters<A[K]>[0], ctx: RpcCallContext) => ReturnType<A[K]>;
};

/** A typed client: the API's methods with call options, plus close(). */
export type RpcClient<A extends RpcApi> = {
  [K in keyof A]: (req: Parameters<A[K]>[0], opts?: CallOptions) => ReturnType<A[K]>;
} & { close(): void };

function ctorOf(def: RpcServiceDef<RpcApi>): grpc.ServiceClientConstructor {
  return serviceClient(loadProto(def.proto), def.service);
}

/**
 * Adds an implementation to a server. Handlers only translate; each gets the call's cancellation
 * signal. A rejection keeps its PvcError code and retry hint across the wire (see errors.ts);
 * anything else is INTERNAL with the error's message (never a stack trace).
 */
export function addRpcService<A extends RpcApi>(server: grpc.Server, def: RpcServiceDef<A>, impl: NoInfer<RpcHandlers<A>>): void {
  const ctor = ctorOf(def as RpcServiceDef<RpcApi>);
  const methods = impl as Record<string, ((req: unknown, ctx: RpcCallContext) => Promise<unknown>) | undefined>;
  const handlers: grpc.UntypedServiceImplementation = {};
  for (const [name, attrs] of Object.entries(ctor.service)) {
    const key = methods[attrs.originalName ?? name] ? (attrs.originalName ?? name) : name;
    const method = methods[key];
    if (typeof method !== 'function') throw new Error(`${def.service}: no handler for ${name}`);
    handlers[name] = unaryHandler(key, (req: unknown, ctx) => method.call(impl, req, ctx));
  }
  server.addService(ctor.service, handlers);
}

/** Opens a typed client to a local service (e.g. `unixTarget(socketPath(dir, 'vmd'))`). */
export function rpcClient<A extends RpcApi>(target: string, def: RpcServiceDef<A>): RpcClient<A> {
  const Ctor = ctorOf(def as RpcServiceDef<RpcApi>);
  const client = new Ctor(target, grpc.credentials.createInsecure());
  const out: Record<string, unknown> = { close: () => client.close() };
  for (const [name, attrs] of Object.entries(Ctor.service)) {
    const key = attrs.originalName ?? name;
    out[key] = (req: unknown, opts?: CallOptions) => unaryCall(client, key, req, opts);
  }
  return out as RpcClient<A>;
}
