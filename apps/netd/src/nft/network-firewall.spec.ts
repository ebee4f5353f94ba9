import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLogger, FakeExec, TimeoutError, withTempDir, type ExecResult } from '@pvc/runtime';
import { Firewall, type FirewallDeps } from './firewall.js';
import type { NetworkFirewallSpec } from './network-ruleset.js';

interface LogLine {
  level: number;
  msg: string;
  [k: string]: unknown;
}

/**
 * A fake nft that reads the files it is given (following `include "<dir>/*"`) and refuses the
 * first line holding `acept` or `BROKEN`, naming that file and line as nft does.
 */
function fakeNft(): FakeExec {
  const lines = (file: string): [string, number, string][] =>
    readFileSync(file, 'utf8')
      .split('\n')
      .flatMap((text, i): [string, number, string][] => {
        const inc = /^include "(.*)\/\*"$/.exec(text)?.[1];
        if (inc === undefined) return [[file, i + 1, text]];
        return existsSync(inc) ? readdirSync(inc).sort().flatMap((f) => lines(join(inc, f))) : [];
      });
  return new FakeExec().on('nft', (call): ExecResult => {
    const file = call.args[call.args.length - 1] ?? '';
    const bad = lines(file).find(([, , text]) => /acept|BROKEN/.test(text));
    if (!bad) return { exitCode: 0, stdout: '', stderr: '' };
    return { exitCode: 1, stdout: '', stderr: `${bad[0]}:${bad[1]}:1-5: Error: syntax error, unexpected newline\n${bad[2]}\n` };
  });
}

function setup(dir: string, exec: FakeExec, extra: Partial<FirewallDeps> = {}) {
  const logs: LogLine[] = [];
  const logger = createLogger({ service: 'test', destination: { write: (s: string) => void logs.push(JSON.parse(s) as LogLine) } });
  const firewall = new Firewall({ enabled: true, dynamicDirectory: dir, exec, logger, ...extra });
  const nft = join(dir, 'nft');
  return { firewall, logs, nft, base: join(nft, 'base.nft'), probe: join(nft, 'probe.nft'), file: (vni: number) => join(nft, 'networks', `${vni}.nft`) };
}

const spec = (vni: number, acls: Partial<NetworkFirewallSpec['acls']> = {}): NetworkFirewallSpec => ({
  vni,
  ip4: { network: `10.${vni % 256}.0.0/24`, gateway: `10.${vni % 256}.0.1` },
  ip6: null,
  acls: { in: acls.in ?? [], out: acls.out ?? [] },
});

test('setNetwork writes networks/<vni>.nft (0600), checks, loads; nothing skipped', () =>
  withTempDir('pvc-nft-net-', async (dir) => {
    const exec = fakeNft();
    const { firewall, base, file } = setup(dir, exec);
    await firewall.start();
    const outcome = await firewall.setNetwork(spec(1000, { in: [{ name: 'ssh', rule: 'tcp dport 22 accept', order: '1' }] }));
    assert.deepEqual(outcome, { status: 'loaded', reasons: ['network 1000 set'], skipped: [] });
    assert.match(readFileSync(file(1000), 'utf8'), /^add rule inet filter vxlan1000-in counter tcp dport 22 accept$/m);
    assert.equal(statSync(file(1000)).mode & 0o777, 0o600);
    assert.deepEqual(exec.lines().slice(2), [`nft -c -f ${base}`, `nft -f ${base}`]);
    assert.deepEqual(firewall.networkVnis, [1000]);
    assert.deepEqual(readdirSync(join(dir, 'nft')).filter((f) => f.endsWith('.tmp')), []);
  }));

test('a refused ACL is left out and reported by network and name; the rest loads; only that network is probed', () =>
  withTempDir('pvc-nft-net-', async (dir) => {
    const exec = fakeNft();
    const { firewall, logs, base, probe, file } = setup(dir, exec);
    await firewall.start();
    await firewall.setNetwork(spec(1001, { in: [{ name: 'fine', rule: 'accept', order: 1 }] }));
    const before = exec.calls.length;
    const outcome = await firewall.setNetwork(
      spec(1000, {
        in: [{ name: 'ssh', rule: 'tcp dport 22 acept', order: '2' }, { name: 'web', rule: 'tcp dport 80 accept', order: '10' }],
        out: [{ name: 'smtp', rule: 'tcp dport 25 drop', order: '1' }],
      }),
    );
    assert.deepEqual(outcome, {
      status: 'loaded',
      reasons: ['network 1000 set'],
      skipped: [{ kind: 'acl', vni: 1000, direction: 'in', name: 'ssh', rule: 'tcp dport 22 acept', reason: 'syntax error, unexpected newline' }],
    });
    // check (refused, names 1000.nft) → context probe → one probe per ACL of 1000 → check → load
    assert.deepEqual(exec.lines().slice(before), [
      `nft -c -f ${base}`,
      `nft -c -f ${probe}`,
      `nft -c -f ${probe}`,
      `nft -c -f ${probe}`,
      `nft -c -f ${probe}`,
      `nft -c -f ${base}`,
      `nft -f ${base}`,
    ]);
    const text = readFileSync(file(1000), 'utf8');
    assert.match(text, /^# left out \(refused\): in "ssh" \(order 2\)$/m);
    assert.doesNotMatch(text, /acept/);
    assert.match(text, /tcp dport 80 accept/);
    assert.match(readFileSync(file(1001), 'utf8'), /vxlan1001-in counter accept/);
    const errors = logs.filter((l) => l.level === 50);
    assert.equal(errors.length, 1);
    assert.deepEqual(
      { msg: errors[0]?.msg, vni: errors[0]?.vni, direction: errors[0]?.direction, acl: errors[0]?.acl, rule: errors[0]?.rule, err: errors[0]?.err },
      { msg: 'network firewall rule refused; it is left out of the ruleset', vni: 1000, direction: 'in', acl: 'ssh', rule: 'tcp dport 22 acept', err: 'syntax error, unexpected newline' },
    );
    assert.equal(logs.at(-1)?.msg, 'firewall ruleset loaded');
    assert.equal(logs.at(-1)?.skipped, 1);
  }));

test('refused ACLs in two networks are all found (nft names one file at a time)', () =>
  withTempDir('pvc-nft-net-', async (dir) => {
    const { firewall } = setup(dir, fakeNft());
    await firewall.start();
    const outcome = await firewall.setNetworks([
      spec(1000, { in: [{ name: 'a', rule: 'acept', order: 1 }] }),
      spec(1001, { out: [{ name: 'b', rule: 'BROKEN', order: 1 }, { name: 'c', rule: 'accept', order: 2 }] }),
    ]);
    assert.equal(outcome.status, 'loaded');
    assert.ok(outcome.status === 'loaded');
    assert.deepEqual(outcome.skipped.map((s) => (s.kind === 'acl' ? [s.vni, s.direction, s.name] : s)), [[1000, 'in', 'a'], [1001, 'out', 'b']]);
  }));

test('a rule text with a line break or ";" is refused without asking nft, and reported the same way', () =>
  withTempDir('pvc-nft-net-', async (dir) => {
    const exec = fakeNft();
    const { firewall, base } = setup(dir, exec);
    await firewall.start();
    const before = exec.calls.length;
    const outcome = await firewall.setNetwork(spec(1000, { in: [{ name: 'sneaky', rule: 'accept\nflush ruleset', order: 1 }, { name: 'semi', rule: 'accept; flush ruleset', order: 2 }] }));
    assert.ok(outcome.status === 'loaded');
    assert.deepEqual(outcome.skipped.map((s) => [s.kind, s.vni, 'name' in s ? s.name : '', s.reason]), [
      ['acl', 1000, 'sneaky', 'the rule text contains a line break (one nft rule per ACL)'],
      ['acl', 1000, 'semi', "the rule text contains ';' (one nft rule per ACL)"],
    ]);
    assert.deepEqual(exec.lines().slice(before), [`nft -c -f ${base}`, `nft -f ${base}`]);
  }));

test('a refusal no ACL explains (a broken static file): the pass fails, nothing loaded, no ACL blamed', () =>
  withTempDir('pvc-nft-net-', async (dir) => {
    const exec = fakeNft();
    const { firewall, nft, base, probe } = setup(dir, exec);
    await firewall.start();
    writeFileSync(join(nft, 'static', 'local'), 'add rule inet filter input BROKEN\n');
    const before = exec.calls.length;
    const outcome = await firewall.setNetwork(spec(1000, { in: [{ name: 'ok', rule: 'accept', order: 1 }] }));
    assert.ok(outcome.status === 'failed');
    assert.equal(outcome.error.file, join(nft, 'static', 'local'));
    assert.deepEqual(outcome.skipped, []);
    assert.deepEqual(exec.lines().slice(before), [`nft -c -f ${base}`, `nft -c -f ${probe}`], 'no load, one context probe');
  }));

test('a malformed network gets no file and is reported; the others load', () =>
  withTempDir('pvc-nft-net-', async (dir) => {
    const { firewall, logs, file } = setup(dir, fakeNft());
    await firewall.start();
    await firewall.setNetwork(spec(1000));
    assert.ok(existsSync(file(1000)));
    const outcome = await firewall.setNetwork({ ...spec(1000), ip4: { network: '10.0.0.0/24 accept', gateway: '10.0.0.1' } });
    assert.ok(outcome.status === 'loaded');
    assert.deepEqual(outcome.skipped, [{ kind: 'network', vni: 1000, reason: 'ip4_network "10.0.0.0/24 accept" is not an IPv4 CIDR' }]);
    assert.equal(existsSync(file(1000)), false);
    assert.ok(logs.some((l) => l.level === 50 && l.vni === 1000 && l.msg === 'network firewall not written: the network is malformed; it gets no rules'));
  }));

test('removeNetwork removes the file and reloads; setNetworks prunes files of unknown networks, not foreign files', () =>
  withTempDir('pvc-nft-net-', async (dir) => {
    const exec = fakeNft();
    const { firewall, nft, base, file } = setup(dir, exec);
    await firewall.start();
    const leftover = file(999); // left by an earlier netd: kept until the full list is known
    writeFileSync(leftover, 'add chain inet filter vxlan999-in\n');
    writeFileSync(join(nft, 'networks', 'README'), '# not netd\'s\n');
    await firewall.setNetwork(spec(1000));
    await firewall.setNetwork(spec(1001));
    assert.ok(existsSync(leftover));
    const before = exec.calls.length;
    assert.deepEqual(await firewall.removeNetwork(1000), { status: 'loaded', reasons: ['network 1000 removed'], skipped: [] });
    assert.equal(existsSync(file(1000)), false);
    assert.deepEqual(exec.lines().slice(before), [`nft -c -f ${base}`, `nft -f ${base}`]);
    assert.deepEqual(firewall.networkVnis, [1001]);
    assert.equal((await firewall.removeNetwork(4242)).status, 'loaded', 'removing an unknown network is fine');
    assert.equal((await firewall.setNetworks([spec(1001)])).status, 'loaded');
    assert.deepEqual(readdirSync(join(nft, 'networks')).sort(), ['1001.nft', 'README']);
  }));

test('a probe that times out stops the pass: failed, nothing loaded', () =>
  withTempDir('pvc-nft-net-', async (dir) => {
    const exec = fakeNft();
    const { firewall, probe } = setup(dir, exec);
    await firewall.start();
    exec.on(`nft -c -f ${probe}`, () => Promise.reject(new TimeoutError('nft', 10)));
    const outcome = await firewall.setNetwork(spec(1000, { in: [{ name: 'x', rule: 'acept', order: 1 }] }));
    assert.ok(outcome.status === 'failed');
    assert.equal(outcome.error.code, 'FIREWALL_TIMEOUT');
    assert.equal(exec.lines().filter((l) => l.startsWith('nft -f')).length, 1, 'only the start loaded');
  }));

test('networking disabled: networks are recorded, no file written, nft never run', () =>
  withTempDir('pvc-nft-net-', async (dir) => {
    const exec = fakeNft();
    const { firewall } = setup(dir, exec, { enabled: false });
    assert.deepEqual(await firewall.setNetwork(spec(1000)), { status: 'disabled' });
    assert.deepEqual(await firewall.removeNetwork(1000), { status: 'disabled' });
    assert.deepEqual(exec.lines(), []);
    assert.equal(existsSync(join(dir, 'nft')), false);
  }));
