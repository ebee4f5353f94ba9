// The built netd (apps/netd/dist/main.js) as a real process inside a throwaway network namespace
// (`ip netns exec`): it loads the base ruleset at start, keeps serving when a rule file is broken
// (the ruleset in force stays), and with enable_networking false touches no ruleset. Root only.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeTestConfig } from '@pvc/config/testing';
import { checkHealth, socketPath, unixTarget } from '@pvc/rpc';
import { waitUntil } from '../../support/wait.js';
import { addNetns, BASE_CHAINS, deleteNetns, filterChains, listRuleset, requireRootAndNft, type NftObject } from './nft-netns.js';

const ROOT = new URL('../../../', import.meta.url).pathname;
const MAIN = join(ROOT, 'apps', 'netd', 'dist', 'main.js');
const NS = `pvc-netdp-${process.pid % 100_000}`;

interface NetdInNetns {
  lines(): Record<string, unknown>[];
  output(): string;
  stop(): Promise<number | null>;
}

/** Starts netd in NS with the sample config plus `edits`, dynamic directory `run`; waits until it serves. */
async function startNetd(dir: string, run: string, edits: [string, unknown][]): Promise<NetdInNetns> {
  const cfg = writeTestConfig(
    dir,
    ['pvc.node', 'hv1'],
    ['pvc.cluster.coordinators', ['hv1', 'hv2', 'hv3']],
    ['pvc.system.configuration.directories.dynamic_directory', run],
    ['pvc.system.configuration.directories.log_directory', join(dir, 'log')],
    ['pvc.system.configuration.directories.console_log_directory', join(dir, 'console')],
    ...edits,
  );
  const child = spawn('ip', ['netns', 'exec', NS, process.execPath, MAIN, '--config', cfg], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const proc: NetdInNetns = {
    output: () => out,
    lines: () =>
      out
        .slice(0, out.lastIndexOf('\n') + 1)
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
  running.add(proc);
  const target = unixTarget(socketPath(run, 'netd'));
  try {
    await waitUntil(() => checkHealth(target, '', { deadlineMs: 500 }), { what: 'netd health SERVING', until: (s) => s === 'SERVING', timeoutMs: 15_000, intervalMs: 100 });
  } catch (err) {
    await proc.stop();
    throw new Error(`netd did not start: ${String(err)}\n${out}`);
  }
  return proc;
}

const running = new Set<NetdInNetns>();

describe('netd process in a network namespace: the firewall at start (root)', () => {
  let dir = '';
  const run = (): string => join(dir, 'run');
  const rulesetWhen = (what: string, until: (r: NftObject[]) => boolean): Promise<NftObject[]> =>
    waitUntil(() => listRuleset(NS), { what, until, timeoutMs: 10_000 });

  before(() => {
    requireRootAndNft();
    assert.ok(existsSync(MAIN), `${MAIN} missing: run the build first (npx tsc -b apps/netd)`);
    addNetns(NS);
    dir = mkdtempSync(join(tmpdir(), 'pvc-netd-nft-'));
  });
  after(async () => {
    for (const p of running) await p.stop();
    deleteNetns(NS);
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  test('networking enabled: the base ruleset is loaded at start', async () => {
    const netd = await startNetd(dir, run(), []);
    try {
      await waitUntil(() => netd.lines().find((l) => l.msg === 'firewall ruleset loaded'), { what: 'the "firewall ruleset loaded" line', timeoutMs: 10_000 });
      const ruleset = await rulesetWhen('table inet filter with its two chains', (r) => filterChains(r).size === 2);
      assert.deepEqual(ruleset, [{ table: { family: 'inet', name: 'filter' } }, { chain: BASE_CHAINS.forward }, { chain: BASE_CHAINS.input }]);
      assert.ok(existsSync(join(run(), 'nft', 'base.nft')));
    } finally {
      assert.equal(await netd.stop(), 0, netd.output());
    }
  });

  test('a broken per-network file: the error names it, netd keeps serving, the ruleset in force stays', async () => {
    const before = await rulesetWhen('the ruleset of the previous start', (r) => filterChains(r).size === 2);
    const broken = join(run(), 'nft', 'networks', '1000.nft');
    writeFileSync(broken, 'add rule inet filter input tcp dport 22 acept\n', { mode: 0o600 });
    const netd = await startNetd(dir, run(), []);
    try {
      const line = await waitUntil(() => netd.lines().find((l) => l.component === 'firewall' && l.level === 50), { what: 'the firewall error line', timeoutMs: 10_000 });
      assert.ok(line);
      assert.equal(line.msg, 'firewall ruleset not loaded; the ruleset in force is left as it was');
      assert.equal(line.file, broken);
      assert.match(String(line.err), new RegExp(`^nft rejected ${broken} \\(line 1\\): syntax error`));
      assert.equal(await checkHealth(unixTarget(socketPath(run(), 'netd')), '', { deadlineMs: 1000 }), 'SERVING');
      assert.deepEqual(listRuleset(NS), before);
    } finally {
      assert.equal(await netd.stop(), 0, netd.output());
      rmSync(broken);
    }
  });

  test('enable_networking false: the ruleset is left alone, no firewall file written, said once', async () => {
    const before = await rulesetWhen('the ruleset of the first start', (r) => filterChains(r).size === 2);
    const otherRun = join(dir, 'run-disabled');
    mkdirSync(otherRun);
    const netd = await startNetd(dir, otherRun, [['pvc.functions.enable_networking', false]]);
    try {
      const said = (): Record<string, unknown>[] => netd.lines().filter((l) => l.component === 'firewall');
      await waitUntil(said, { what: 'the firewall line', until: (l) => l.length > 0, timeoutMs: 10_000 });
      assert.deepEqual(said().map((l) => l.msg), ['networking is not enabled on this node (functions.enable_networking): the firewall (nftables) is left alone']);
      assert.equal(existsSync(join(otherRun, 'nft')), false);
      assert.deepEqual(listRuleset(NS), before);
    } finally {
      assert.equal(await netd.stop(), 0, netd.output());
    }
  });
});
