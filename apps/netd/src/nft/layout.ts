/**
 * Where netd's nftables files live and what the base file says (pvc-inventory §7.4). Pure.
 */
import { join } from 'node:path';
import { FirewallError } from './errors.js';

/** The firewall's directory tree under `<dynamic_directory>/nft`. */
export interface NftLayout {
  /** `<dynamic_directory>/nft` */
  readonly dir: string;
  /** `<dir>/base.nft`, the file loaded with `nft -f`. */
  readonly base: string;
  /** `<dir>/static`: operator-independent static rules, included as `static/*`. */
  readonly staticDir: string;
  /** `<dir>/networks`: one file per managed network, included as `networks/*`. */
  readonly networksDir: string;
}

/** The layout under `dynamicDirectory` (config key `system.configuration.directories.dynamic_directory`). */
export function nftLayout(dynamicDirectory: string): NftLayout {
  const dir = join(dynamicDirectory, 'nft');
  return { dir, base: join(dir, 'base.nft'), staticDir: join(dir, 'static'), networksDir: join(dir, 'networks') };
}

/**
 * The base ruleset: the original's (flush everything, table `inet filter` with the `forward` and
 * `input` base chains at priority 0, both accepting by default, then the static and per-network
 * files). Written as one table block instead of the original's `add` lines; the result is the same.
 * nft includes of a glob that matches nothing succeed (checked with nft 1.0.6), so empty
 * directories need no placeholder file.
 *
 * Throws {@link FirewallError} when the directory cannot be quoted in an nft include (a `"`, a
 * line break, or a glob character in the path would change what is included).
 */
export function baseRuleset(layout: NftLayout): string {
  if (/["\n\r*?[\]]/.test(layout.dir)) {
    throw new FirewallError('FIREWALL_FILES', `${layout.dir}: cannot be used in an nft include (it contains a quote, a line break or a glob character); choose another system.configuration.directories.dynamic_directory`, { file: layout.base });
  }
  return [
    '# Written by netd; rewritten and reloaded by netd (nft -f), do not edit.',
    'flush ruleset',
    ...baseTableLines(),
    `include "${layout.staticDir}/*"`,
    `include "${layout.networksDir}/*"`,
    '',
  ].join('\n');
}

/** Table `inet filter` with the `forward` and `input` base chains (filter hooks, priority 0, accept). */
export function baseTableLines(): string[] {
  return [
    'table inet filter {',
    '  chain forward {',
    '    type filter hook forward priority 0; policy accept;',
    '  }',
    '  chain input {',
    '    type filter hook input priority 0; policy accept;',
    '  }',
    '}',
  ];
}
