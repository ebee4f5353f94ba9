import * as grpc from '@grpc/grpc-js';
import { unaryCall, type CallOptions } from './call.js';
import { unaryHandler, type RpcCallContext } from './handler.js';

/**
 * A service as the generated code defines it (`src/generated/**`, ts-proto's grpc-js output, e.g.
 * `VmdServiceService`): per method its path (`/pvc.vmd.v1.VmdService/GetResources`) and the
 * message codecs. The wire names come from the .proto files, never from this code.
 */
export type RpcServiceDef = grpc.ServiceDefinition;

/**
 * A local gRPC API as TypeScript: each method takes the request message and resolves to the
 * response message (camelCase fields, the generated message interfaces).
 */
export type RpcApi = { [method: string]: (req: never) => Promise<unknown> };

/**
 * The API of a generated service definition: request and response types are the generated
 * messages, so a field renamed in a .proto (and regenerated) is a compile error at every user.
 */
export type ApiOf<S extends RpcServiceDef> = {
  [K in keyof S]: S[K] extends { requestDeserialize: (b: Buffer) => infer Req; responseDeserialize: (b: Buffer) => infer Res }
    ? (req: Req) => Promise<Res>
    : never;
};

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

/** Unary methods only: the local APIs have no streams (a stream would need its own wrapper). */
function unaryMethods(def: RpcServiceDef): string[] {
  return Object.entries(def).map(([name, m]) => {
    if (m.requestStream || m.responseStream) throw new Error(`${m.path}: streaming methods are not supported`);
    return name;
  });
}

/**
 * Adds an implementation to a server. Handlers only translate; each gets the call's cancellation
 * signal. A rejection keeps its PvcError code and retry hint across the wire (see errors.ts);
 * anything else is INTERNAL with the error's message (never a stack trace).
 */
export function addRpcService<S extends RpcServiceDef>(server: grpc.Server, def: S, impl: NoInfer<RpcHandlers<ApiOf<S>>>): void {
  const methods = impl as Record<string, ((req: unknown, ctx: RpcCallContext) => Promise<unknown>) | undefined>;
  const handlers: grpc.UntypedServiceImplementation = {};
  for (const name of unaryMethods(def)) {
    const method = methods[name];
    if (typeof method !== 'function') throw new Error(`${def[name]?.path ?? name}: no handler for ${name}`);
    handlers[name] = unaryHandler(name, (req: unknown, ctx) => method.call(impl, req, ctx));
  }
  server.addService(def, handlers);
}

/** Opens a typed client to a local service (e.g. `unixTarget(socketPath(dir, 'vmd'))`). */
export function rpcClient<S extends RpcServiceDef>(target: string, def: S): RpcClient<ApiOf<S>> {
  const Ctor = grpc.makeGenericClientConstructor(def, '');
  const client = new Ctor(target, grpc.credentials.createInsecure());
  const out: Record<string, unknown> = { close: () => client.close() };
  for (const name of unaryMethods(def)) {
    out[name] = (req: unknown, opts?: CallOptions) => unaryCall(client, name, req, opts);
  }
  return out as RpcClient<ApiOf<S>>;
}
