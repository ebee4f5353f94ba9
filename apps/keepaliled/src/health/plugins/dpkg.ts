/**
 * Built-in health plugin `dpkg`: +1 for each of: packages in an inconsistent state (`dpkg --audit`),
 * packages with an upgrade available (`apt list --upgradable`, refreshed at most every 10 minutes:
 * it costs about a CPU-second), obsolete conffiles (`dpkg-query` conffiles flagged `obsolete`).
 * The original's `dpkg` plugin, except that it found obsolete conffiles by `*.dpkg-*` file names.
 *
 * Self-contained: imports types only.
 */
import type { HealthPlugin, PluginContext, PluginResult } from '../types.js';

/** How long an `apt list --upgradable` answer is reused, ms. */
export const UPGRADABLE_TTL_MS = 600_000;
const CMD_TIMEOUT_MS = 20_000;

/** Package names listed by `dpkg --audit` (its indented `<package>  <description>` lines). */
export function parseAudit(stdout: string): string[] {
  const names = stdout.split('\n').map((l) => /^ (\S+)\s/.exec(l)?.[1]).filter((n): n is string => n !== undefined);
  return [...new Set(names)].sort();
}

/** `name/suite version arch [upgradable from: old]` lines of `apt list --upgradable`. */
export function parseUpgradable(stdout: string): string[] {
  return stdout
    .split('\n')
    .map((l) => /^([^\s/]+)\/\S+\s+\S+\s+\S+\s+\[upgradable from:/.exec(l)?.[1])
    .filter((n): n is string => n !== undefined)
    .sort();
}

/** Conffiles flagged `obsolete` in `dpkg-query -W -f '${Conffiles}\n'` output (` <path> <md5> obsolete`). */
export function parseObsoleteConffiles(stdout: string): string[] {
  return stdout
    .split('\n')
    .map((l) => /^ (\/\S+) [0-9a-f]+ obsolete$/.exec(l.trimEnd())?.[1])
    .filter((p): p is string => p !== undefined)
    .sort();
}

async function must(ctx: PluginContext, cmd: string, args: string[], okCodes: readonly number[] = [0]): Promise<string> {
  const r = await ctx.exec(cmd, args, { timeoutMs: CMD_TIMEOUT_MS });
  if (!okCodes.includes(r.exitCode)) {
    throw new Error(`${cmd} ${args.join(' ')} failed (exit ${r.exitCode}): ${r.stderr.trim().split('\n').at(-1) ?? ''}`);
  }
  return r.stdout;
}

/** Builds a fresh plugin (its own upgradable cache). */
export function createDpkgPlugin(): HealthPlugin {
  let cache: { at: number; names: string[] } | undefined;
  const upgradable = async (ctx: PluginContext): Promise<string[]> => {
    if (cache !== undefined && ctx.now() - cache.at < UPGRADABLE_TTL_MS) return cache.names;
    const names = parseUpgradable(await must(ctx, 'apt', ['list', '--upgradable']));
    cache = { at: ctx.now(), names };
    return names;
  };
  return {
    name: 'dpkg',
    async setup(ctx) {
      try {
        if ((await ctx.exec('dpkg', ['--version'])).exitCode === 0) return undefined;
      } catch {
        // fall through
      }
      return 'dpkg not installed (not a Debian system)';
    },
    async run(ctx): Promise<PluginResult> {
      // dpkg --audit exits 1 when it lists problems (dpkg ≥ 1.17.10), 0 when there are none.
      const inconsistent = parseAudit(await must(ctx, 'dpkg', ['--audit'], [0, 1]));
      const obsolete = parseObsoleteConffiles(await must(ctx, 'dpkg-query', ['-W', '-f', '${Conffiles}\n']));
      const upgrades = await upgradable(ctx);
      const version = (await ctx.readFile('/etc/debian_version').catch(() => 'unknown')).trim();
      const delta = [inconsistent, upgrades, obsolete].filter((l) => l.length > 0).length;
      return {
        delta,
        message: `Debian ${version}; obsolete conffiles: ${obsolete.length}; packages inconsistent: ${inconsistent.length}, upgradable: ${upgrades.length}`,
        data: { debian_version: version, inconsistent_packages: inconsistent, upgradable_packages: upgrades, obsolete_conffiles: obsolete },
      };
    },
  };
}

export default createDpkgPlugin();
