import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AbortedError, createLogger, FakeExec, withTempDir, type ExecResult } from '@pvc/runtime';
import { Firewall, type FirewallDeps } from './firewall.js';

interface LogLine {
  level: number;
  msg: string;
  [k: string]: unknown;
}

function setup(dir: string, exec: FakeExec, extra: Partial<FirewallDeps> = {}) {
  const lines: LogLine[] = [];
  const logger = createLogger({ service: 'test', destination: { write: (s: string) => void lines.push(JSON.parse(s) as LogLine) } });
  const firewall = new Firewall({ enabled: true, dynamicDirectory: dir, exec, logger, nftTimeoutMs: 4321, ...extra });
  return { firewall, logs: lines, base: join(dir, 'nft', 'base.nft') };
}

const ok: Partial<ExecResult> = { exitCode: 0 };
const mode = (p: string): number => statSync(p).mode & 0o777;

test('start writes the base file (0600, dirs 0700), checks it, then loads it, each with the deadline', () =>
  withTempDir('pvc-nft-', async (dir) => {
    const timeouts: (number | undefined)[] = [];
    const exec = new FakeExec().on('nft', (_c, o) => (timeouts.push(o.timeoutMs), { exitCode: 0, stdout: '', stderr: '' }));
    const { firewall, logs, base } = setup(dir, exec);
    const outcome = await firewall.start();
    assert.deepEqual(outcome, { status: 'loaded', reasons: ['start'], skipped: [] });
    assert.deepEqual(exec.lines(), [`nft -c -f ${base}`, `nft -f ${base}`]);
    assert.deepEqual(timeouts, [4321, 4321]);
    const nft = join(dir, 'nft');
    assert.equal(
      readFileSync(base, 'utf8'),
      [
        '# Written by netd; rewritten and reloaded by netd (nft -f), do not edit.',
        'flush ruleset',
        'table inet filter {',
        '  chain forward {',
        '    type filter hook forward priority 0; policy accept;',
        '  }',
        '  chain input {',
        '    type filter hook input priority 0; policy accept;',
        '  }',
        '}',
        `include "${nft}/static/*"`,
        `include "${nft}/networks/*"`,
        '',
      ].join('\n'),
    );
    assert.equal(mode(base), 0o600);
    for (const d of [nft, join(nft, 'static'), join(nft, 'networks')]) assert.equal(mode(d), 0o700, d);
    assert.deepEqual(readdirSync(nft).filter((f) => f.endsWith('.tmp')), [], 'no temporary file left');
    assert.deepEqual(logs.map((l) => l.msg), ['firewall ruleset loaded']);
    assert.equal(firewall.last, outcome);
  }));

test('an nft directory the supervisor made 0755, and a base file someone changed, are put right', () =>
  withTempDir('pvc-nft-', async (dir) => {
    const nft = join(dir, 'nft');
    mkdirSync(nft, { mode: 0o755 });
    writeFileSync(join(nft, 'base.nft'), 'flush ruleset\n', { mode: 0o644 });
    const { firewall, base } = setup(dir, new FakeExec().on('nft', ok));
    assert.equal((await firewall.start()).status, 'loaded');
    assert.equal(mode(nft), 0o700);
    assert.equal(mode(base), 0o600);
    assert.match(readFileSync(base, 'utf8'), /table inet filter/);
  }));

test('a file nft rejects: no load, the error names the file and nft message, and a later reload works', () =>
  withTempDir('pvc-nft-', async (dir) => {
    const broken = join(dir, 'nft', 'networks', '1000.nft');
    const stderr = `In file included from ${join(dir, 'nft', 'base.nft')}:12:1-40:\n${broken}:1:46-46: Error: syntax error, unexpected newline\n`;
    let fixed = false;
    const exec = new FakeExec().on('nft -f', ok).on('nft -c', () => (fixed ? { exitCode: 0, stdout: '', stderr: '' } : { exitCode: 1, stdout: '', stderr }));
    const { firewall, logs, base } = setup(dir, exec);
    const outcome = await firewall.start();
    assert.equal(outcome.status, 'failed');
    assert.ok(outcome.status === 'failed');
    assert.equal(outcome.error.code, 'FIREWALL_REJECTED');
    assert.equal(outcome.error.file, broken);
    assert.equal(outcome.error.message, `nft rejected ${broken} (line 1): syntax error, unexpected newline`);
    assert.deepEqual(exec.lines(), [`nft -c -f ${base}`], 'nothing loaded after a failed check');
    const error = logs.find((l) => l.level === 50);
    assert.ok(error, 'no error logged');
    assert.equal(error.msg, 'firewall ruleset not loaded; the ruleset in force is left as it was');
    assert.equal(error.file, broken);
    assert.equal(error.code, 'FIREWALL_REJECTED');
    assert.match(String(error.nft), /syntax error, unexpected newline/);
    fixed = true;
    assert.equal((await firewall.reload('network 1000 fixed')).status, 'loaded');
    assert.deepEqual(exec.lines().slice(1), [`nft -c -f ${base}`, `nft -f ${base}`]);
  }));

test('the load itself fails after a good check: reported the same way', () =>
  withTempDir('pvc-nft-', async (dir) => {
    const exec = new FakeExec().on('nft -c', ok).on('nft -f', { exitCode: 1, stderr: 'netlink: Error: Could not process rule: Device or resource busy\n' });
    const { firewall, base } = setup(dir, exec);
    const outcome = await firewall.start();
    assert.ok(outcome.status === 'failed');
    assert.equal(outcome.error.file, base);
    assert.match(outcome.error.message, /Device or resource busy/);
  }));

test('nft missing: a clear error naming base.nft, nothing thrown', () =>
  withTempDir('pvc-nft-', async (dir) => {
    const { firewall, logs, base } = setup(dir, new FakeExec());
    const outcome = await firewall.start();
    assert.ok(outcome.status === 'failed');
    assert.equal(outcome.error.code, 'FIREWALL_NFT_UNAVAILABLE');
    assert.equal(outcome.error.file, base);
    assert.match(outcome.error.message, /^cannot run nft to load .*base\.nft: nft -c -f .*: nft: command not found$/);
    assert.equal(logs.filter((l) => l.level === 50).length, 1);
  }));

test('files that cannot be written: FIREWALL_FILES naming the path, nft not run', () =>
  withTempDir('pvc-nft-', async (dir) => {
    const notADir = join(dir, 'file');
    writeFileSync(notADir, '');
    const exec = new FakeExec().on('nft', ok);
    const { firewall } = setup(notADir, exec);
    const outcome = await firewall.start();
    assert.ok(outcome.status === 'failed');
    assert.equal(outcome.error.code, 'FIREWALL_FILES');
    assert.match(outcome.error.message, new RegExp(`^cannot write the firewall files: ${notADir}/nft: `));
    assert.deepEqual(exec.lines(), []);
  }));

test('a dynamic directory nft cannot quote in an include is refused before anything is written', () =>
  withTempDir('pvc-nft-', async (dir) => {
    const odd = join(dir, 'a"b');
    const exec = new FakeExec().on('nft', ok);
    const outcome = await setup(odd, exec).firewall.start();
    assert.ok(outcome.status === 'failed');
    assert.match(outcome.error.message, /cannot be used in an nft include.*dynamic_directory/);
    assert.equal(existsSync(odd), false);
    assert.deepEqual(exec.lines(), []);
  }));

test('enable_networking false: no file, no nft, one log line however often it is asked', () =>
  withTempDir('pvc-nft-', async (dir) => {
    const exec = new FakeExec().on('nft', ok);
    const { firewall, logs } = setup(dir, exec, { enabled: false });
    assert.deepEqual(await firewall.start(), { status: 'disabled' });
    assert.deepEqual(await firewall.reload('network added'), { status: 'disabled' });
    assert.deepEqual(exec.lines(), []);
    assert.equal(existsSync(join(dir, 'nft')), false);
    assert.deepEqual(logs.map((l) => l.msg), ['networking is not enabled on this node (functions.enable_networking): the firewall (nftables) is left alone']);
    assert.equal(firewall.passes, 0);
  }));

test('reloads are serialized: requests during a pass lead to exactly one more pass (check → load each)', () =>
  withTempDir('pvc-nft-', async (dir) => {
    const gates: (() => void)[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const exec = new FakeExec().on('nft', async () => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise<void>((r) => gates.push(r));
      inFlight--;
      return { exitCode: 0, stdout: '', stderr: '' };
    });
    const { firewall, base } = setup(dir, exec);
    const waitGate = async (): Promise<void> => {
      // The pass writes files (real fs) before each nft call: wait for the call, bounded (2 s).
      for (let i = 0; i < 2000 && gates.length === 0; i++) await new Promise<void>((r) => setTimeout(r, 1));
      const gate = gates.shift();
      assert.ok(gate, 'no nft call is waiting');
      gate();
    };
    const first = firewall.start();
    await waitGate(); // the check of pass 1 answers; its load is now running
    const during = [firewall.reload('network 1000 added'), firewall.reload('network 1001 added'), firewall.reload('acl changed')];
    await waitGate(); // load of pass 1
    assert.deepEqual(await first, { status: 'loaded', reasons: ['start'], skipped: [] });
    await waitGate(); // check of pass 2
    await waitGate(); // load of pass 2
    const served = await Promise.all(during);
    for (const o of served) assert.deepEqual(o, { status: 'loaded', reasons: ['network 1000 added', 'network 1001 added', 'acl changed'], skipped: [] });
    assert.equal(firewall.passes, 2);
    assert.equal(maxInFlight, 1);
    assert.deepEqual(exec.lines(), [`nft -c -f ${base}`, `nft -f ${base}`, `nft -c -f ${base}`, `nft -f ${base}`]);
    await firewall.idle();
  }));

test('the shutdown signal cuts a reload short: logged as a warning, not an error', () =>
  withTempDir('pvc-nft-', async (dir) => {
    const ac = new AbortController();
    ac.abort();
    const exec = new FakeExec().on('nft', (_c, o) => {
      if (o.signal?.aborted) return Promise.reject(new AbortedError('nft'));
      return Promise.resolve({ exitCode: 0, stdout: '', stderr: '' });
    });
    const { firewall, logs } = setup(dir, exec);
    const outcome = await firewall.start(ac.signal);
    assert.ok(outcome.status === 'failed');
    assert.equal(outcome.error.code, 'FIREWALL_ABORTED');
    assert.deepEqual(logs.map((l) => [l.level, l.msg]), [[40, 'firewall reload cut short by shutdown']]);
  }));
