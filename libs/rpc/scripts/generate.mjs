#!/usr/bin/env node
// Generates the TypeScript gRPC code of libs/rpc from its .proto files: message types with their
// binary codecs and grpc-js service definitions, by ts-proto, with the .proto files compiled by
// buf (both from npm, versions pinned by package-lock.json; no protoc needed).
//
//   node libs/rpc/scripts/generate.mjs [<out dir>]     (npm run rpc:gen)
//
// The output (default libs/rpc/src/generated) is committed; libs/rpc/src/generated.spec.ts
// regenerates into a temporary directory and fails when the committed files differ.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const LIB = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const ROOT = resolve(LIB, '../..');

/** ts-proto options; see the README of libs/rpc for why each one. */
export const TS_PROTO_OPTIONS = [
  'outputServices=grpc-js',
  'esModuleInterop=true',
  'importSuffix=.js',
  'forceLong=number',
  'stringEnums=true',
  'enumsAsLiterals=true',
  'useOptionals=none',
  'outputJsonMethods=false',
  'outputPartialMethods=false',
  'exportCommonSymbols=false',
  'env=node',
];

/** Writes the generated files into `out` (emptied first). */
export function generate(out = join(LIB, 'src', 'generated')) {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const template = {
    version: 'v2',
    plugins: [{ local: join(ROOT, 'node_modules', '.bin', 'protoc-gen-ts_proto'), out, opt: TS_PROTO_OPTIONS }],
  };
  execFileSync(join(ROOT, 'node_modules', '.bin', 'buf'), ['generate', join(LIB, 'proto'), '--template', JSON.stringify(template)], {
    cwd: LIB,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  return out;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = generate(process.argv[2] ? resolve(process.argv[2]) : undefined);
  console.log(`rpc: generated ${out}`);
}
