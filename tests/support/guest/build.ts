import { createHash } from 'node:crypto';
import { copyFile, mkdir, open, readFile, rename, rm, stat, writeFile, chmod } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PvcError } from '@pvc/runtime';
import type { Exec } from '@pvc/runtime';
import { modulesKey, resolveDiskModules, resolveNetModules, type GuestModules } from './net-modules.js';

/** The guest's /init script (busybox shell), shipped next to this file. */
export const GUEST_INIT = fileURLToPath(new URL('./init.sh', import.meta.url));

/** A built (or cached) guest image. */
export interface BuiltGuest {
  kernel: string;
  initrd: string;
  kernelVersion: string;
  /** True when the image came from the cache. */
  cached: boolean;
  /**
   * The virtio NIC modules in the image, in load order (`pvc.net=dhcp` on the kernel command line
   * loads them), or why there are none (the guest then prints `pvc-guest <name> net error <why>`).
   */
  net: { modules: string[] } | { unavailable: string };
  /**
   * The virtio disk modules in the image, in load order (`pvc.disk=<dev>` on the kernel command
   * line loads them), or why there are none (the guest then prints `pvc-guest <name> disk error <why>`).
   */
  disk: { modules: string[] } | { unavailable: string };
}

/** Inputs of {@link buildGuestImage}. */
export interface BuildGuestOptions {
  exec: Exec;
  /** Kept across runs; one sub-directory per kernel version and init/busybox hash. */
  cacheDir: string;
  kernel: { path: string; version: string };
  /** A statically linked busybox (Debian package busybox-static). Default /bin/busybox. */
  busybox?: string;
  /** Where the kernel's modules are (default `/lib/modules/<kernel version>`): the virtio NIC's and disk's come from there. */
  modulesDir?: string;
}

/** Raised when the guest image cannot be built; the message names the missing piece. */
export class GuestBuildError extends PvcError {
  constructor(message: string, cause?: unknown) {
    super('GUEST_BUILD', message, { cause, retryable: false });
  }
}

/** True when the ELF file has no PT_INTERP program header, i.e. is statically linked. */
export async function isStaticElf(file: string): Promise<boolean> {
  const fh = await open(file, 'r');
  try {
    const head = Buffer.alloc(64);
    await fh.read(head, 0, 64, 0);
    if (head.readUInt32BE(0) !== 0x7f454c46 || head[4] !== 2) return false; // ELF, 64-bit
    const phoff = Number(head.readBigUInt64LE(32));
    const phentsize = head.readUInt16LE(54);
    const phnum = head.readUInt16LE(56);
    const table = Buffer.alloc(phentsize * phnum);
    await fh.read(table, 0, table.length, phoff);
    for (let i = 0; i < phnum; i++) if (table.readUInt32LE(i * phentsize) === 3) return false; // PT_INTERP
    return true;
  } finally {
    await fh.close();
  }
}

async function cacheKey(opts: BuildGuestOptions, busybox: string, mods: Record<ModuleKind, GuestModules>): Promise<string> {
  const init = await readFile(GUEST_INIT);
  const bb = await stat(busybox);
  const h = createHash('sha256').update(init).update(`${busybox}:${bb.size}:${bb.mtimeMs}`)
    .update(`net=${modulesKey(mods.net)};disk=${modulesKey(mods.disk)}`).digest('hex');
  return `guest-${opts.kernel.version}-${h.slice(0, 12)}`;
}

async function run(exec: Exec, cmd: string, args: readonly string[]): Promise<void> {
  const r = await exec.run(cmd, args, { timeoutMs: 120_000 });
  if (r.exitCode !== 0) throw new GuestBuildError(`${cmd} ${args.join(' ')} exited ${r.exitCode}: ${r.stderr.trim()}`);
}

/** Lays out the initramfs tree: /init, /bin/busybox, and the console device nodes. */
async function stageInitramfs(exec: Exec, root: string, busybox: string): Promise<void> {
  for (const d of ['bin', 'dev', 'proc', 'sys', 'tmp', 'sbin', 'usr/bin', 'usr/sbin']) await mkdir(join(root, d), { recursive: true });
  await copyFile(busybox, join(root, 'bin', 'busybox'));
  await chmod(join(root, 'bin', 'busybox'), 0o755);
  await copyFile(GUEST_INIT, join(root, 'init'));
  await chmod(join(root, 'init'), 0o755);
  // The kernel opens /dev/console for /init before devtmpfs is mounted.
  await run(exec, 'mknod', ['-m', '600', join(root, 'dev', 'console'), 'c', '5', '1']);
  await run(exec, 'mknod', ['-m', '660', join(root, 'dev', 'ttyS0'), 'c', '4', '64']);
}

const DECOMPRESS = { xz: 'xz', zst: 'zstd', gz: 'gzip' } as const;

/** The devices whose modules the image carries; init.sh loads `<kind>.order` when asked for the device. */
type ModuleKind = 'net' | 'disk';

/**
 * Puts a device's modules into `/lib/modules/pvc/` (shared by both kinds) with `<kind>.order` (one
 * file name a line, load order), decompressed (busybox insmod takes plain `.ko` only); or writes
 * `<kind>.unavailable` with the reason.
 */
async function stageModules(exec: Exec, root: string, kind: ModuleKind, mods: GuestModules): Promise<void> {
  const dir = join(root, 'lib', 'modules', 'pvc');
  await mkdir(dir, { recursive: true });
  if (!('modules' in mods)) {
    await writeFile(join(dir, `${kind}.unavailable`), `${mods.unavailable}\n`);
    return;
  }
  for (const m of mods.modules) {
    const dest = join(dir, `${m.name}.ko`);
    if (existsSync(dest)) continue;
    if (m.compression === 'none') {
      await copyFile(m.path, dest);
      continue;
    }
    const tool = DECOMPRESS[m.compression];
    const r = await exec.run('bash', ['-c', 'set -o pipefail; "$1" -dc "$2" >"$3"', 'decompress', tool, m.path, dest], { timeoutMs: 60_000 });
    if (r.exitCode !== 0) {
      throw new GuestBuildError(`cannot decompress ${m.path} with ${tool} (exit ${r.exitCode}: ${r.stderr.trim()}); busybox insmod needs a plain .ko (install ${tool})`);
    }
  }
  await writeFile(join(dir, `${kind}.order`), mods.modules.map((m) => `${m.name}.ko\n`).join(''));
}

/**
 * Builds the tiny guest from local files only: Debian's cloud kernel plus a gzip'd newc cpio
 * holding a static busybox, /init (see init.sh) and the virtio NIC's and disk's kernel modules (net-modules.ts).
 * The result is cached under `<cacheDir>/guest-<kernel version>-<hash of init.sh, busybox and the
 * module files>/`, so re-runs cost nothing.
 */
export async function buildGuestImage(opts: BuildGuestOptions): Promise<BuiltGuest> {
  const busybox = opts.busybox ?? '/bin/busybox';
  if (!existsSync(busybox)) throw new GuestBuildError(`${busybox} not found (Debian package busybox-static)`);
  if (!(await isStaticElf(busybox))) {
    throw new GuestBuildError(`${busybox} is dynamically linked; the initramfs needs busybox-static`);
  }
  const modulesDir = opts.modulesDir ?? join('/lib/modules', opts.kernel.version);
  const mods = { net: resolveNetModules(modulesDir), disk: resolveDiskModules(modulesDir) };
  const dir = join(opts.cacheDir, await cacheKey(opts, busybox, mods));
  const names = (m: GuestModules): BuiltGuest['net'] => ('modules' in m ? { modules: m.modules.map((x) => x.name) } : { unavailable: m.unavailable });
  const out = {
    kernel: join(dir, 'vmlinuz'), initrd: join(dir, 'initrd.gz'), kernelVersion: opts.kernel.version,
    net: names(mods.net), disk: names(mods.disk),
  };
  if (existsSync(join(dir, 'complete'))) return { ...out, cached: true };

  const tmp = `${dir}.tmp-${process.pid}`;
  await rm(tmp, { recursive: true, force: true });
  await mkdir(join(tmp, 'root'), { recursive: true });
  try {
    await stageInitramfs(opts.exec, join(tmp, 'root'), busybox);
    await stageModules(opts.exec, join(tmp, 'root'), 'net', mods.net);
    await stageModules(opts.exec, join(tmp, 'root'), 'disk', mods.disk);
    await run(opts.exec, 'bash', [
      '-c',
      'set -o pipefail; cd "$1" && find . -print0 | cpio --null -o -H newc --quiet | gzip -6 >"$2"',
      'mkinitramfs',
      join(tmp, 'root'),
      join(tmp, 'initrd.gz'),
    ]);
    await copyFile(opts.kernel.path, join(tmp, 'vmlinuz'));
    await rm(join(tmp, 'root'), { recursive: true, force: true });
    await writeFile(join(tmp, 'complete'), `${new Date().toISOString()}\n`);
    await rm(dir, { recursive: true, force: true });
    await rename(tmp, dir);
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err instanceof GuestBuildError ? err : new GuestBuildError(`building the guest image in ${tmp} failed`, err);
  }
  return { ...out, cached: false };
}
