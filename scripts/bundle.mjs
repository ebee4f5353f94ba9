#!/usr/bin/env node
// Bundles each node service and the `pvc` client into one ES module file with esbuild, laid out as
// the Debian packages install them under /usr/lib/pvc (scripts/package.sh calls this):
//
//   <out>/<svc>/main.mjs            one file per service (all workspace libs and npm deps inside)
//   <out>/<svc>/package.json        {"name":"@pvc/<svc>","exports":"./main.mjs"}
//   <out>/netd/lease-hook.js        the dnsmasq lease hook netd points dnsmasq at (beside main.mjs)
//   <out>/cli/main.mjs              the `pvc` client
//   <out>/plugins/<name>.js         the shipped health plugins (installed in /usr/share/pvc/plugins)
//   (no .proto files: libs/rpc's messages and services are generated TypeScript, bundled like
//   the rest; only grpc-health-check still reads its own health.proto, see `relocate`)
//   <out>/node_modules/             only what cannot be bundled: the native addons
//                                   (@unraid/libvirt's libvirt.node, koffi's koffi.node) and the
//                                   links @pvc/<svc> → ../../<svc>, through which the supervisor's
//                                   standalone mode (`import.meta.resolve('@pvc/<svc>')`) finds
//                                   its children
//
// Usage: node scripts/bundle.mjs <out dir> [--sourcemap]
import { build } from 'esbuild';
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = new URL('..', import.meta.url).pathname;
const [out, ...flags] = process.argv.slice(2);
if (!out) {
  console.error('usage: node scripts/bundle.mjs <out dir> [--sourcemap]');
  process.exit(2);
}
const SERVICES = ['supervisor', 'netd', 'vmd', 'cephd', 'keepaliled'];
/** Loaded with require() at run time from node_modules beside the bundles: koffi finds its
 * koffi.node through paths relative to its own files. (@unraid/libvirt is bundled; its libvirt.node
 * is copied beside vmd's bundle, see below.) */
const EXTERNAL = ['koffi'];

// Bundled CommonJS dependencies call require() for Node's built-ins; an ES module has no require.
// `__pvcBundleDir`: the bundle's own directory, for the dependencies below that locate files
// relative to their own source file.
const banner = [
  "import { createRequire as __pvcCreateRequire } from 'node:module';",
  "import { fileURLToPath as __pvcFileURLToPath } from 'node:url';",
  'const require = __pvcCreateRequire(import.meta.url);',
  "const __pvcBundleDir = __pvcFileURLToPath(new URL('.', import.meta.url));",
].join(' ');

/**
 * Two of our modules load a package with `createRequire(import.meta.url)` (a CommonJS internal of
 * node-zookeeper-client that they patch; koffi). esbuild does not follow such a local `require`,
 * and from the bundle's directory the package would not be found: drop the local binding so the
 * call is the module's own `require`, which esbuild bundles (or, for externals, leaves to the
 * banner's require, which finds node_modules beside the bundles).
 */
const localRequire = {
  name: 'pvc-local-require',
  setup(b) {
    b.onLoad({ filter: /\/(apps|libs)\/[^/]+\/src\/.*\.ts$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes('createRequire(import.meta.url)')) return undefined;
      return { contents: text.replace(/const require = createRequire\(import\.meta\.url\);/g, ''), loader: 'ts' };
    });
  },
};

/**
 * Dependencies that find files relative to their own source file, rewritten to the bundle's layout:
 * - grpc-health-check loads `${__dirname}/../../proto/health/v1/health.proto` when imported: its
 *   `__dirname` becomes `<bundle dir>/../grpc-health-check/build/src`, and its proto folder is
 *   copied to `<out>/grpc-health-check/proto`.
 * - @unraid/libvirt requires `../build/Release/libvirt` (the addon) through its own
 *   `createRequire(import.meta.url)`, which in the bundle is the bundle's URL: it becomes
 *   `./libvirt.node`, copied beside vmd's bundle.
 * (grpc-js's channelz and ORCA protos and pino's transport workers are also found through
 * `__dirname`, but only when used; the services use none of them.)
 */
const relocate = {
  name: 'pvc-relocate',
  setup(b) {
    b.onLoad({ filter: /\/node_modules\/grpc-health-check\/build\/src\/health\.js$/ }, (args) => ({
      contents: `var __dirname = require('node:path').join(__pvcBundleDir, '../grpc-health-check/build/src');\n${readFileSync(args.path, 'utf8')}`,
      loader: 'js',
    }));
    b.onLoad({ filter: /\/node_modules\/@unraid\/libvirt\/dist\/hypervisor\.js$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes("require('../build/Release/libvirt')")) throw new Error(`${args.path}: the addon's require changed; update scripts/bundle.mjs`);
      return { contents: text.replace("require('../build/Release/libvirt')", "require('./libvirt.node')"), loader: 'js' };
    });
  },
};

async function bundle(entry, outfile) {
  await build({
    entryPoints: [join(ROOT, entry)],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // The workspace libs' "development" condition points at their TypeScript source.
    conditions: ['development'],
    external: EXTERNAL,
    banner: { js: banner },
    plugins: [localRequire, relocate],
    sourcemap: flags.includes('--sourcemap') ? 'linked' : false,
    legalComments: 'none',
    logLevel: 'warning',
  });
}

/** Copies an npm package into `<out>/node_modules`, without the paths `skip` names. */
function copyPackage(name, skip = []) {
  const from = join(ROOT, 'node_modules', name);
  cpSync(from, join(out, 'node_modules', name), {
    recursive: true,
    filter: (src) => !skip.some((s) => src === join(from, s)),
  });
}

rmSync(out, { recursive: true, force: true });
for (const svc of SERVICES) {
  await bundle(`apps/${svc}/src/main.ts`, join(out, svc, 'main.mjs'));
  writeFileSync(join(out, svc, 'package.json'), `${JSON.stringify({ name: `@pvc/${svc}`, type: 'module', exports: './main.mjs' }, null, 2)}\n`);
  if (svc !== 'supervisor') {
    mkdirSync(join(out, 'node_modules', '@pvc'), { recursive: true });
    symlinkSync(`../../${svc}`, join(out, 'node_modules', '@pvc', svc));
  }
}
// apps/netd/src/dhcp/hook-script.ts runs `<dir of netd's module>/lease-hook.js`.
await bundle('apps/netd/src/dhcp/lease-hook.ts', join(out, 'netd', 'lease-hook.js'));
await bundle('apps/cli/src/main.ts', join(out, 'cli', 'main.mjs'));
writeFileSync(join(out, 'cli', 'package.json'), `${JSON.stringify({ name: '@pvc/cli', type: 'module', exports: './main.mjs' }, null, 2)}\n`);
// The shipped health plugins (keepaliled's plugin_directory): each imports only types, so each
// compiles alone to one self-contained module.
const pluginSrc = join(ROOT, 'apps/keepaliled/src/health/plugins');
await build({
  entryPoints: readdirSync(pluginSrc).filter((f) => f.endsWith('.ts') && !f.endsWith('.spec.ts')).map((f) => join(pluginSrc, f)),
  outdir: join(out, 'plugins'),
  bundle: false,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  logLevel: 'warning',
});
cpSync(join(ROOT, 'node_modules/grpc-health-check/proto'), join(out, 'grpc-health-check', 'proto'), { recursive: true });
cpSync(join(ROOT, 'node_modules/@unraid/libvirt/build/Release/libvirt.node'), join(out, 'vmd', 'libvirt.node'));
copyPackage('koffi', ['doc', 'vendor', 'CHANGELOG.md']);
copyPackage('@koromix/koffi-linux-x64', ['musl_x64']);
console.log(`bundle: ${SERVICES.join(', ')}, cli → ${out}`);
