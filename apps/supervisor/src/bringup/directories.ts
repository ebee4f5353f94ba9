import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '@pvc/config';
import { socketDir } from '@pvc/rpc';
import type { Logger } from '@pvc/runtime';

/** A directory the node needs and its mode. */
export interface NeededDirectory {
  readonly path: string;
  readonly mode: number;
}

/**
 * Start-up step 2: the dynamic directory (with the sockets directory, 0750, and — with networking —
 * the original's `dnsmasq`, `pdns` and `nft` subdirectories), the log and console log directories.
 */
export function neededDirectories(config: Config): NeededDirectory[] {
  const d = config.system.configuration.directories;
  const out: NeededDirectory[] = [
    { path: d.dynamic_directory, mode: 0o755 },
    { path: socketDir(d.dynamic_directory), mode: 0o750 },
    { path: d.log_directory, mode: 0o755 },
    { path: d.console_log_directory, mode: 0o755 },
  ];
  if (config.functions.enable_networking) {
    for (const sub of ['dnsmasq', 'pdns', 'nft']) out.push({ path: join(d.dynamic_directory, sub), mode: 0o755 });
  }
  return out;
}

/** The port that creates directories: true when it had to create `dir`. */
export type MakeDirectory = (dir: NeededDirectory) => Promise<boolean>;

/** The real port: `mkdir -p` with the mode; existing directories are left as they are. */
export const makeDirectory: MakeDirectory = async (dir) => (await mkdir(dir.path, { recursive: true, mode: dir.mode })) !== undefined;

/** Creates every needed directory (parents included). */
export async function ensureDirectories(config: Config, mk: MakeDirectory, logger: Logger): Promise<void> {
  for (const dir of neededDirectories(config)) {
    if (await mk(dir)) logger.debug({ dir: dir.path }, 'directory created');
  }
}
