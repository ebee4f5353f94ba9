/**
 * The `--dhcp-script` dnsmasq runs: a small executable wrapper in `<dynamic_directory>/dnsmasq/`
 * that starts the Node lease hook (`lease-hook.ts`, compiled to `dist/dhcp/lease-hook.js`).
 * dnsmasq needs one absolute executable path (no PATH search, no arguments), and the compiled
 * hook is not executable by itself; the wrapper also pins the Node binary and, when netd runs
 * from source, the TypeScript loader.
 */
import { chmod, mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HOOK_ENV } from './dnsmasq-args.js';

/**
 * How to run the hook from this netd: `node dist/dhcp/lease-hook.js` when netd runs compiled,
 * `node --conditions=development --import <tsx> src/dhcp/lease-hook.ts` when it runs from source.
 */
export function defaultHookCommand(): string[] {
  const fromSource = import.meta.url.endsWith('.ts');
  const hook = fileURLToPath(new URL(fromSource ? './lease-hook.ts' : './lease-hook.js', import.meta.url));
  if (!fromSource) return [process.execPath, hook];
  return [process.execPath, '--conditions=development', '--import', import.meta.resolve('tsx'), hook];
}

/** Quotes one word for `sh`. */
export function shellQuote(word: string): string {
  return `'${word.split("'").join(`'\\''`)}'`;
}

/**
 * The wrapper's text: exec the hook command with dnsmasq's arguments. `init` (dnsmasq waits for it
 * before it serves) prints the file netd wrote just before the start, when dnsmasq's environment
 * names one (`PVC_INIT_LEASES`): no Node start and no Zookeeper session of its own (~0.7 s).
 */
export function hookScriptText(command: readonly string[]): string {
  return [
    '#!/bin/sh',
    '# Written by netd: the dnsmasq lease hook (--dhcp-script). Do not edit.',
    `if [ "$1" = init ] && [ -n "$${HOOK_ENV.initLeases}" ] && [ -r "$${HOOK_ENV.initLeases}" ]; then exec cat -- "$${HOOK_ENV.initLeases}"; fi`,
    `exec ${command.map(shellQuote).join(' ')} "$@"`,
    '',
  ].join('\n');
}

/** Writes the wrapper at `path` (mode 0755) atomically: a running dnsmasq never sees half a file. */
export async function writeHookScript(path: string, command: readonly string[]): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = join(dirname(path), `.lease-hook.${process.pid}.tmp`);
  await writeFile(tmp, hookScriptText(command), { mode: 0o755 });
  await chmod(tmp, 0o755);
  await rename(tmp, path);
}
