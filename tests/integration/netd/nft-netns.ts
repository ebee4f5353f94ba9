// Helpers of the firewall integration tests: a throwaway network namespace and what the real nft
// inside it reports. Root only.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';

/** Fails loudly (never a silent pass) when the test cannot run here. */
export function requireRootAndNft(): void {
  assert.equal(process.getuid?.(), 0, 'the firewall integration tests need root (network namespaces, nft)');
  for (const [cmd, arg] of [['nft', '--version'], ['ip', '-V']] as const) {
    const r = spawnSync(cmd, [arg], { encoding: 'utf8' });
    assert.equal(r.status, 0, `${cmd} is needed (Debian packages nftables, iproute2): ${r.error?.message ?? r.stderr}`);
  }
}

/** Runs `ip …`; throws with its stderr on failure. */
export function ip(...args: string[]): string {
  const r = spawnSync('ip', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ip ${args.join(' ')}: ${r.stderr.trim()}`);
  return r.stdout;
}

/** A fresh network namespace (a stale one of the same name is removed first). */
export function addNetns(name: string): void {
  deleteNetns(name);
  ip('netns', 'add', name);
}

/** Removes the namespace and whatever ruleset it has; never throws (used in cleanup). */
export function deleteNetns(name: string): void {
  spawnSync('ip', ['netns', 'del', name]);
}

/** A table, chain or rule of `nft -j list ruleset`, without its handle (which a reload renumbers). */
export type NftObject = Record<string, Record<string, unknown>>;

/** The namespace's ruleset as `nft -j list ruleset` reports it, handles and metainfo dropped. */
export function listRuleset(ns: string): NftObject[] {
  const r = spawnSync('ip', ['netns', 'exec', ns, 'nft', '-j', 'list', 'ruleset'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`nft -j list ruleset in ${ns}: ${r.stderr.trim()}`);
  const doc = JSON.parse(r.stdout) as { nftables: NftObject[] };
  return doc.nftables
    .filter((o) => !('metainfo' in o))
    .map((o) =>
      Object.fromEntries(
        Object.entries(o).map(([kind, body]) => [kind, Object.fromEntries(Object.entries(body).filter(([k]) => k !== 'handle'))]),
      ),
    );
}

/** The chains of table `inet filter` by name. */
export function filterChains(ruleset: NftObject[]): Map<string, Record<string, unknown>> {
  const chains = ruleset
    .map((o) => o.chain)
    .filter((c): c is Record<string, unknown> => c !== undefined && c.family === 'inet' && c.table === 'filter');
  return new Map(chains.map((c) => [String(c.name), c]));
}

/** The base chains netd's base file creates, as nft reports them. */
export const BASE_CHAINS = {
  forward: { family: 'inet', table: 'filter', name: 'forward', type: 'filter', hook: 'forward', prio: 0, policy: 'accept' },
  input: { family: 'inet', table: 'filter', name: 'input', type: 'filter', hook: 'input', prio: 0, policy: 'accept' },
};
