import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

/** Root folder of the .proto files (`proto/pvc/<svc>/v1/*.proto`), in source and in dist alike. */
export const PROTO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', 'proto');

const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: false,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
  includeDirs: [PROTO_ROOT],
};

/** Parsed definitions are immutable, so each .proto is read and parsed once per process. */
const loaded = new Map<string, grpc.GrpcObject>();

/** Loads one .proto (path relative to PROTO_ROOT, or absolute) into a grpc-js package object. */
export function loadProto(relativePath: string, options: protoLoader.Options = LOADER_OPTIONS): grpc.GrpcObject {
  let pkg = loaded.get(relativePath);
  if (!pkg) {
    pkg = grpc.loadPackageDefinition(protoLoader.loadSync(relativePath, options));
    loaded.set(relativePath, pkg);
  }
  return pkg;
}

/** Looks up a service constructor (e.g. `pvc.common.v1.StatusService`) in a loaded package. */
export function serviceClient(pkg: grpc.GrpcObject, dotted: string): grpc.ServiceClientConstructor {
  let node: unknown = pkg;
  for (const part of dotted.split('.')) {
    node = (node as Record<string, unknown>)[part];
    if (node === undefined) throw new Error(`proto service ${dotted} not found`);
  }
  return node as grpc.ServiceClientConstructor;
}
