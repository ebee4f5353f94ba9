/**
 * The kernel modules the tiny guest needs for a virtio NIC (`virtio_pci`, `virtio_net` and what
 * they depend on) and for a virtio disk (`virtio_pci`, `virtio_blk`), found through the kernel's
 * `modules.dep` and put into the initramfs in the order `init.sh` loads them (dependencies
 * first). Debian's cloud kernel builds all of them as modules; a module the kernel has built in
 * (`modules.builtin`) needs nothing.
 */
import { readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';

/** The drivers the guest's NIC needs; their dependencies come from `modules.dep`. */
export const NET_DRIVERS = ['virtio_pci', 'virtio_net'] as const;

/** The drivers the guest's disk (`<target bus='virtio'>`, /dev/vda) needs. */
export const DISK_DRIVERS = ['virtio_pci', 'virtio_blk'] as const;

/** One module file to put into the initramfs. */
export interface GuestModule {
  /** Module name (`virtio_net`). */
  name: string;
  /** Absolute path of the file under `/lib/modules/<version>/`. */
  path: string;
  /** How the file is compressed (busybox insmod loads only plain `.ko`: the build decompresses). */
  compression: 'none' | 'xz' | 'zst' | 'gz';
  /** For the cache key. */
  size: number;
  mtimeMs: number;
}

/** What {@link resolveModules} found: the files in load order, or why the guest cannot have the device. */
export type NetModules = { modules: GuestModule[] } | { unavailable: string };
/** Same shape, for the disk. */
export type GuestModules = NetModules;

const moduleName = (file: string): string => basename(file).replace(/\.ko(\.(xz|zst|gz))?$/, '').replace(/-/g, '_');

function compressionOf(file: string): GuestModule['compression'] {
  const m = /\.ko\.(xz|zst|gz)$/.exec(file);
  return m ? (m[1] as 'xz' | 'zst' | 'gz') : 'none';
}

function readLines(file: string): string[] | undefined {
  try {
    return readFileSync(file, 'utf8').split('\n');
  } catch {
    return undefined;
  }
}

/** {@link resolveModules} of {@link NET_DRIVERS}. */
export function resolveNetModules(modulesDir: string): NetModules {
  return resolveModules(modulesDir, NET_DRIVERS);
}

/** {@link resolveModules} of {@link DISK_DRIVERS}. */
export function resolveDiskModules(modulesDir: string): GuestModules {
  return resolveModules(modulesDir, DISK_DRIVERS);
}

/**
 * Resolves `drivers` and their dependencies in `modulesDir` (`/lib/modules/<version>`).
 * Never throws: a kernel without the files (no modules directory, a driver neither a module nor
 * built in) yields `unavailable` with the reason, so the guest still builds without the device and
 * a guest asked for it says why on its console.
 */
export function resolveModules(modulesDir: string, drivers: readonly string[]): GuestModules {
  const depLines = readLines(join(modulesDir, 'modules.dep'));
  if (!depLines) return { unavailable: `no ${join(modulesDir, 'modules.dep')} (the kernel's modules are not installed)` };
  const builtin = new Set((readLines(join(modulesDir, 'modules.builtin')) ?? []).filter(Boolean).map(moduleName));
  const deps = new Map<string, { file: string; deps: string[] }>();
  for (const line of depLines) {
    const [file, rest = ''] = line.split(':');
    if (!file) continue;
    deps.set(moduleName(file), { file, deps: rest.trim().split(/\s+/).filter(Boolean).map(moduleName) });
  }
  const order: string[] = [];
  const visit = (name: string, chain: string[]): string | undefined => {
    if (order.includes(name) || builtin.has(name)) return undefined;
    const entry = deps.get(name);
    if (!entry) return `module ${name} (needed by ${[...chain, name].join(' → ')}) is neither in modules.dep nor built in`;
    if (chain.includes(name)) return `modules.dep has a dependency cycle at ${name}`;
    for (const d of entry.deps) {
      const err = visit(d, [...chain, name]);
      if (err) return err;
    }
    order.push(name);
    return undefined;
  };
  for (const driver of drivers) {
    const err = visit(driver, []);
    if (err) return { unavailable: err };
  }
  const modules = order.map((name) => {
    const path = join(modulesDir, deps.get(name)!.file);
    const st = statSync(path, { throwIfNoEntry: false });
    return st ? { name, path, compression: compressionOf(path), size: st.size, mtimeMs: st.mtimeMs } : undefined;
  });
  const missing = order.filter((_, i) => !modules[i]);
  if (missing.length > 0) return { unavailable: `modules.dep names files that do not exist: ${missing.join(', ')}` };
  return { modules: modules as GuestModule[] };
}

/** Part of the image's cache key: which module files, in which order. */
export function modulesKey(m: GuestModules): string {
  return 'modules' in m ? m.modules.map((x) => `${x.path}:${x.size}:${x.mtimeMs}`).join(',') : `unavailable:${m.unavailable}`;
}

/** {@link modulesKey} (the name the NIC-only image used). */
export const netModulesKey = modulesKey;
