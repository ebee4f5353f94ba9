// netd's per-network firewall (issue 12 item 3) with the real nft, inside a throwaway network
// namespace through the module's real Exec (`ip netns exec <ns> nft …`). Root only: fails loudly
// without root or nft. What the kernel holds is read with `nft -j list ruleset`, waited for with a bound.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createExec, createLogger } from '@pvc/runtime';
import { Firewall, type NetworkFirewallSpec } from '../../../apps/netd/src/nft/index.js';
import { waitUntil } from '../../support/wait.js';
import { addNetns, deleteNetns, filterChains, listRuleset, requireRootAndNft, type NftObject } from './nft-netns.js';

const NS = `pvc-nftnet-${process.pid % 100_000}`;

const net1000: NetworkFirewallSpec = {
  vni: 1000,
  ip4: { network: '10.100.0.0/24', gateway: '10.100.0.1' },
  ip6: { network: 'fd00:100::/64', gateway: 'fd00:100::1' },
  acls: {
    in: [
      { name: 'web', rule: 'tcp dport 8080 accept', order: '10' },
      { name: 'ssh', rule: 'tcp dport 22 accept', order: '2' },
    ],
    out: [{ name: 'no-smtp', rule: 'tcp dport 25 drop', order: '1' }],
  },
};
const net1001: NetworkFirewallSpec = {
  vni: 1001,
  ip4: { network: '10.101.0.0/24', gateway: '10.101.0.1' },
  ip6: null,
  acls: {
    in: [
      { name: 'typo', rule: 'tcp dport 22 acept', order: '1' },
      { name: 'dns', rule: 'udp dport 5353 accept', order: '2' },
      { name: 'nowhere', rule: 'jump no-such-chain', order: '3' },
    ],
    out: [{ name: 'icmp-out', rule: 'meta l4proto icmp accept', order: '1' }],
  },
};

/** The rules of one chain of `inet filter`, in order. */
const rulesOf = (r: NftObject[], chain: string): Record<string, unknown>[] =>
  r.map((o) => o.rule).filter((x): x is Record<string, unknown> => x !== undefined && x.family === 'inet' && x.table === 'filter' && x.chain === chain);
/** The destination ports a chain's rules match, in order (0 for a rule without one). */
const dports = (r: NftObject[], chain: string): number[] =>
  rulesOf(r, chain).map((rule) => Number(/"field":"dport"}},"right":(\d+)/.exec(JSON.stringify(rule.expr))?.[1] ?? 0));
const mentions = (r: NftObject[], what: string): boolean => r.some((o) => JSON.stringify(o).includes(what));

describe('per-network firewall with the real nft in a network namespace (root)', () => {
  let dir = '';
  let firewall: Firewall;
  const logs: Record<string, unknown>[] = [];
  const rulesetWhen = (what: string, until: (r: NftObject[]) => boolean): Promise<NftObject[]> =>
    waitUntil(() => listRuleset(NS), { what, until, timeoutMs: 5000 });

  before(() => {
    requireRootAndNft();
    addNetns(NS);
    dir = mkdtempSync(join(tmpdir(), 'pvc-nftnet-'));
    firewall = new Firewall({
      enabled: true,
      dynamicDirectory: dir,
      exec: createExec(),
      logger: createLogger({ service: 'test', destination: { write: (s: string) => void logs.push(JSON.parse(s) as Record<string, unknown>) } }),
      nftCommand: ['ip', 'netns', 'exec', NS, 'nft'],
      nftTimeoutMs: 10_000,
    });
  });
  after(() => {
    deleteNetns(NS);
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  test('two networks: the refused ACLs of 1001 are reported by vni and name; both networks and every other rule are loaded', async () => {
    assert.equal((await firewall.start()).status, 'loaded');
    assert.equal((await firewall.setNetwork(net1000)).status, 'loaded');
    const outcome = await firewall.setNetwork(net1001);
    assert.ok(outcome.status === 'loaded', `expected loaded, got ${JSON.stringify(outcome)}`);
    assert.deepEqual(
      outcome.skipped.map((s) => (s.kind === 'acl' ? [s.vni, s.direction, s.name] : [s.vni])),
      [[1001, 'in', 'typo'], [1001, 'in', 'nowhere']],
    );
    for (const s of outcome.skipped) assert.ok(s.reason.length > 0 && !s.reason.includes('\n'), s.reason);
    const refusedLogs = await waitUntil(() => logs.filter((l) => l.msg === 'network firewall rule refused; it is left out of the ruleset'), {
      what: 'one error line per refused ACL',
      until: (l) => l.length === 2,
      timeoutMs: 2000,
    });
    assert.deepEqual(refusedLogs.map((l) => [l.vni, l.acl]), [[1001, 'typo'], [1001, 'nowhere']]);

    const chains = ['vxlan1000-in', 'vxlan1000-out', 'vxlan1001-in', 'vxlan1001-out'];
    const r = await rulesetWhen('the chains of both networks', (x) => chains.every((c) => filterChains(x).has(c)));
    // Each network chain starts with its bare counter; then the ACLs in numeric order.
    assert.deepEqual(dports(r, 'vxlan1000-in'), [0, 22, 8080], 'ssh (order 2) before web (order 10)');
    assert.deepEqual(dports(r, 'vxlan1000-out'), [0, 25]);
    assert.deepEqual(dports(r, 'vxlan1001-in'), [0, 5353], 'dns loaded, typo and nowhere left out');
    assert.equal(rulesOf(r, 'vxlan1001-out').length, 2);
    // input: 9 rules per network (ICMP, ICMPv6, 53/tcp, 53/udp, 67, 123, 547, 80, drop)
    assert.deepEqual(dports(r, 'input'), [0, 0, 53, 53, 67, 123, 547, 80, 0, 0, 0, 53, 53, 67, 123, 547, 80, 0]);
    // forward: 1000 has IPv6 and IPv4 jumps, 1001 only IPv4
    assert.equal(rulesOf(r, 'forward').length, 6);
    assert.equal(rulesOf(r, 'forward').filter((x) => JSON.stringify(x.expr).includes('"jump":{"target":"vxlan1001-in"}')).length, 1);
    assert.ok(!mentions(r, 'no-such-chain'));
  });

  test('removing a network leaves no chain or rule of it; the other network is untouched', async () => {
    const before = await rulesetWhen('network 1000 loaded', (x) => filterChains(x).has('vxlan1000-in'));
    const outcome = await firewall.removeNetwork(1001);
    assert.deepEqual(outcome, { status: 'loaded', reasons: ['network 1001 removed'], skipped: [] });
    assert.equal(existsSync(join(dir, 'nft', 'networks', '1001.nft')), false);
    const r = await rulesetWhen('no chain of 1001', (x) => ![...filterChains(x).keys()].some((c) => c.startsWith('vxlan1001')));
    assert.ok(!mentions(r, 'vmbr1001') && !mentions(r, 'vxlan1001'), 'a rule of 1001 is left');
    assert.deepEqual([...filterChains(r).keys()].sort(), ['forward', 'input', 'vxlan1000-in', 'vxlan1000-out']);
    const of1000 = (x: NftObject[]): NftObject[] => x.filter((o) => JSON.stringify(o).includes('1000'));
    assert.deepEqual(of1000(r), of1000(before));

    assert.equal((await firewall.setNetworks([])).status, 'loaded');
    const empty = await rulesetWhen('only the base chains', (x) => filterChains(x).size === 2);
    assert.equal(empty.filter((o) => o.rule !== undefined).length, 0);
  });
});
