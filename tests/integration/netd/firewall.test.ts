// netd's firewall module with the real nft, run inside a throwaway network namespace through the
// module's real Exec (`ip netns exec <ns> nft …`). Root only: fails loudly without root or nft.
// Checks what the kernel holds afterwards with `nft -j list ruleset`, waited for with a bound.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, writeFileSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createExec, createLogger } from '@pvc/runtime';
import { Firewall, type FirewallOutcome } from '../../../apps/netd/src/nft/index.js';
import { waitUntil } from '../../support/wait.js';
import { addNetns, BASE_CHAINS, deleteNetns, filterChains, listRuleset, requireRootAndNft, type NftObject } from './nft-netns.js';

const NS = `pvc-nft-${process.pid % 100_000}`;

describe('firewall with the real nft in a network namespace (root)', () => {
  let dir = '';
  const logs: Record<string, unknown>[] = [];
  let firewall: Firewall;
  const firewallWith = (nft: readonly string[]): Firewall =>
    new Firewall({
      enabled: true,
      dynamicDirectory: dir,
      exec: createExec(),
      logger: createLogger({ service: 'test', destination: { write: (s: string) => void logs.push(JSON.parse(s) as Record<string, unknown>) } }),
      nftCommand: nft,
      nftTimeoutMs: 10_000,
    });
  /** The ruleset once `until` holds for it (nft answered; bounded). */
  const rulesetWhen = (what: string, until: (r: NftObject[]) => boolean): Promise<NftObject[]> =>
    waitUntil(() => listRuleset(NS), { what, until, timeoutMs: 5000 });

  before(() => {
    requireRootAndNft();
    addNetns(NS);
    dir = mkdtempSync(join(tmpdir(), 'pvc-nft-'));
    firewall = firewallWith(['ip', 'netns', 'exec', NS, 'nft']);
  });
  after(() => {
    deleteNetns(NS);
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  test('start: table inet filter with the forward and input base chains (filter, priority 0, accept); files root only', async () => {
    assert.deepEqual(await firewall.start(), { status: 'loaded', reasons: ['start'], skipped: [] });
    const ruleset = await rulesetWhen('table inet filter with its two chains', (r) => filterChains(r).size === 2);
    assert.deepEqual(ruleset, [{ table: { family: 'inet', name: 'filter' } }, { chain: BASE_CHAINS.forward }, { chain: BASE_CHAINS.input }]);
    const nft = join(dir, 'nft');
    assert.equal(statSync(join(nft, 'base.nft')).mode & 0o777, 0o600);
    for (const d of [nft, join(nft, 'static'), join(nft, 'networks')]) assert.equal(statSync(d).mode & 0o777, 0o700, d);
  });

  test('a second load changes nothing', async () => {
    const before = await rulesetWhen('the base ruleset', (r) => filterChains(r).size === 2);
    assert.equal((await firewall.reload('again')).status, 'loaded');
    const afterwards = await rulesetWhen('the same ruleset', (r) => JSON.stringify(r) === JSON.stringify(before));
    assert.deepEqual(afterwards, before);
  });

  test('static and per-network files are included; a broken one is named and leaves the ruleset in force as it was', async () => {
    const nft = join(dir, 'nft');
    writeFileSync(join(nft, 'static', 'accept-lo'), 'add rule inet filter input iifname "lo" counter accept\n', { mode: 0o600 });
    writeFileSync(join(nft, 'networks', '1000.nft'), 'add chain inet filter vxlan1000-in\nadd rule inet filter vxlan1000-in counter\n', { mode: 0o600 });
    assert.equal((await firewall.reload('network 1000 added')).status, 'loaded');
    const good = await rulesetWhen('chain vxlan1000-in and the static rule', (r) => filterChains(r).has('vxlan1000-in') && r.some((o) => o.rule?.chain === 'input'));
    assert.equal(good.filter((o) => o.rule !== undefined).length, 2);

    // Broken: a typo in a new network's file, and 1000 removed meanwhile.
    const broken = join(nft, 'networks', '1001.nft');
    writeFileSync(broken, 'add chain inet filter vxlan1001-in\nadd rule inet filter vxlan1001-in tcp dport 22 acept\n', { mode: 0o600 });
    unlinkSync(join(nft, 'networks', '1000.nft'));
    const outcome: FirewallOutcome = await firewall.reload('network 1001 added');
    assert.ok(outcome.status === 'failed', `expected a failure, got ${outcome.status}`);
    assert.equal(outcome.error.code, 'FIREWALL_REJECTED');
    assert.equal(outcome.error.file, broken);
    assert.match(outcome.error.message, new RegExp(`^nft rejected ${broken} \\(line 2\\): syntax error`));
    assert.match(outcome.error.nftMessage ?? '', /acept/);
    const logged = await waitUntil(() => logs.find((l) => l.file === broken), { what: 'the error log line naming the file', timeoutMs: 2000 });
    assert.ok(logged);
    assert.equal(logged.msg, 'firewall ruleset not loaded; the ruleset in force is left as it was');
    const kept = await rulesetWhen('the previous ruleset (vxlan1000-in still there)', (r) => filterChains(r).has('vxlan1000-in'));
    assert.deepEqual(kept, good, 'the ruleset in force changed after a rejected load');

    unlinkSync(broken);
    assert.equal((await firewall.reload('network 1001 fixed')).status, 'loaded');
    await rulesetWhen('vxlan1000-in gone after a good reload', (r) => !filterChains(r).has('vxlan1000-in') && filterChains(r).size === 2);
  });

  test('nft missing: a clear error naming base.nft, the ruleset left as it was', async () => {
    const before = await rulesetWhen('the ruleset in force', (r) => filterChains(r).size === 2);
    const base = join(dir, 'nft', 'base.nft');
    for (const argv of [['ip', 'netns', 'exec', NS, '/nonexistent/nft'], ['/nonexistent/nft']]) {
      const outcome = await firewallWith(argv).reload('start');
      assert.ok(outcome.status === 'failed', `${argv.join(' ')}: expected a failure`);
      assert.equal(outcome.error.code, 'FIREWALL_NFT_UNAVAILABLE', outcome.error.message);
      assert.equal(outcome.error.file, base);
      assert.match(outcome.error.message, new RegExp(`^cannot run nft to load ${base}: `));
    }
    assert.deepEqual(await rulesetWhen('the same ruleset', (r) => JSON.stringify(r) === JSON.stringify(before)), before);
  });
});
