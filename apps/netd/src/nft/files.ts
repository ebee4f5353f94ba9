/**
 * Writes the firewall's directories, base file, per-network files and probe file. Root only:
 * directories 0700, files 0600. Every file is written through a temporary file in `nft/` (never
 * in an included directory) and a rename, so nft never reads half a file.
 */
import { chmod, mkdir, readdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describeError } from '@pvc/runtime';
import { FirewallError } from './errors.js';
import { baseRuleset, type NftLayout } from './layout.js';

const DIR_MODE = 0o700;
const FILE_MODE = 0o600;
/** The names netd gives per-network files; only these are pruned. */
const NETWORK_FILE = /^(\d+)\.nft$/;

/**
 * Creates `nft/`, `nft/static/` and `nft/networks/` (mode 0700 also when they already existed: the
 * supervisor creates `nft/` 0755 at bring-up) and writes `base.nft` (0600) when its text differs.
 * Throws {@link FirewallError} `FIREWALL_FILES` naming the path that failed.
 */
export async function writeBaseFiles(layout: NftLayout): Promise<void> {
  const text = baseRuleset(layout);
  for (const dir of [layout.dir, layout.staticDir, layout.networksDir]) {
    await fsStep(dir, layout.base, async () => {
      await mkdir(dir, { recursive: true, mode: DIR_MODE });
      await chmod(dir, DIR_MODE);
    });
  }
  await writeIfChanged(layout, layout.base, text);
}

/** The path of network `vni`'s file. */
export function networkFile(layout: NftLayout, vni: number): string {
  return join(layout.networksDir, `${vni}.nft`);
}

/** What {@link syncNetworkFiles} makes of `networks/`. */
export interface NetworkFilesPlan {
  /** Text of each network's file, by VNI. */
  readonly write: ReadonlyMap<number, string>;
  /** VNIs whose file must go (removed networks, invalid ones). */
  readonly remove: ReadonlySet<number>;
  /** Also remove every other `<digits>.nft` not in `write` (netd knows the full list). */
  readonly prune: boolean;
}

/**
 * Writes the per-network files whose text differs and removes the others named by `plan`.
 * Files in `networks/` not named `<digits>.nft` are not netd's and are left alone.
 * Throws {@link FirewallError} `FIREWALL_FILES` naming the path that failed.
 */
export async function syncNetworkFiles(layout: NftLayout, plan: NetworkFilesPlan): Promise<void> {
  for (const [vni, text] of plan.write) await writeIfChanged(layout, networkFile(layout, vni), text);
  const remove = new Set(plan.remove);
  if (plan.prune) {
    const names = await fsStep(layout.networksDir, layout.networksDir, () => readdir(layout.networksDir));
    for (const name of names) {
      const vni = NETWORK_FILE.exec(name)?.[1];
      if (vni !== undefined && !plan.write.has(Number(vni))) remove.add(Number(vni));
    }
  }
  for (const vni of remove) {
    if (plan.write.has(vni)) continue;
    const path = networkFile(layout, vni);
    await fsStep(path, path, () => unlink(path).catch((err: unknown) => {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }));
  }
}

/** Writes `nft/probe.nft` (not included by base.nft) and returns its path. */
export async function writeProbeFile(layout: NftLayout, text: string): Promise<string> {
  const path = join(layout.dir, 'probe.nft');
  await writeIfChanged(layout, path, text);
  return path;
}

async function writeIfChanged(layout: NftLayout, path: string, text: string): Promise<void> {
  await fsStep(path, path, async () => {
    if ((await readFile(path, 'utf8').catch(() => undefined)) === text) {
      await chmod(path, FILE_MODE);
      return;
    }
    const tmp = join(layout.dir, `.${path.slice(layout.dir.length + 1).replaceAll('/', '-')}.tmp`);
    await writeFile(tmp, text, { mode: FILE_MODE });
    await chmod(tmp, FILE_MODE);
    await rename(tmp, path);
  });
}

async function fsStep<T>(path: string, file: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw new FirewallError('FIREWALL_FILES', `cannot write the firewall files: ${path}: ${describeError(err)}`, { file, cause: err });
  }
}
