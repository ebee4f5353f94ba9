/**
 * Writes the firewall's directories and base file. Root only: directories 0700, files 0600.
 */
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { describeError } from '@pvc/runtime';
import { FirewallError } from './errors.js';
import { baseRuleset, type NftLayout } from './layout.js';

const DIR_MODE = 0o700;
const FILE_MODE = 0o600;

/**
 * Creates `nft/`, `nft/static/` and `nft/networks/` (mode 0700 also when they already existed: the
 * supervisor creates `nft/` 0755 at bring-up) and writes `base.nft` (0600) when its text differs,
 * through a temporary file and a rename, so nft never reads half a file.
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
  await fsStep(layout.base, layout.base, async () => {
    if ((await readFile(layout.base, 'utf8').catch(() => undefined)) === text) {
      await chmod(layout.base, FILE_MODE);
      return;
    }
    const tmp = `${layout.base}.tmp`;
    await writeFile(tmp, text, { mode: FILE_MODE });
    await chmod(tmp, FILE_MODE);
    await rename(tmp, layout.base);
  });
}

async function fsStep(path: string, file: string, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    throw new FirewallError('FIREWALL_FILES', `cannot write the firewall files: ${path}: ${describeError(err)}`, { file, cause: err });
  }
}
