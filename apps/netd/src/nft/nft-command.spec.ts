import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AbortedError, ExecError, FakeExec, TimeoutError, type ExecOptions } from '@pvc/runtime';
import { FirewallError } from './errors.js';
import { runNft } from './nft-command.js';

const BASE = '/run/pvc/nft/base.nft';

async function failure(exec: FakeExec, argv: readonly string[] = ['nft']): Promise<FirewallError> {
  try {
    await runNft({ exec, argv, timeoutMs: 1234 }, 'check', BASE);
  } catch (err) {
    assert.ok(err instanceof FirewallError, `not a FirewallError: ${String(err)}`);
    return err;
  }
  assert.fail('runNft resolved');
}

test('check runs `nft -c -f <file>`, load `nft -f <file>`, with the deadline; a prefix goes first', async () => {
  const seen: ExecOptions[] = [];
  const exec = new FakeExec().on('', (_c, opts) => (seen.push(opts), { exitCode: 0, stdout: '', stderr: '' }));
  await runNft({ exec, argv: ['nft'], timeoutMs: 1234 }, 'check', BASE);
  await runNft({ exec, argv: ['ip', 'netns', 'exec', 'ns1', 'nft'], timeoutMs: 1234 }, 'load', BASE);
  assert.deepEqual(exec.lines(), [`nft -c -f ${BASE}`, `ip netns exec ns1 nft -f ${BASE}`]);
  assert.deepEqual(seen.map((o) => o.timeoutMs), [1234, 1234]);
});

test('a rejected included file is named, with its line and nft message', async () => {
  const stderr = [
    'In file included from /run/pvc/nft/base.nft:12:1-38:',
    '/run/pvc/nft/networks/1000.nft:1:46-46: Error: syntax error, unexpected newline',
    'add rule inet filter input tcp dport 22 acept',
    '                                             ^',
    '',
  ].join('\n');
  const err = await failure(new FakeExec().on('nft', { exitCode: 1, stderr }));
  assert.equal(err.code, 'FIREWALL_REJECTED');
  assert.equal(err.file, '/run/pvc/nft/networks/1000.nft');
  assert.equal(err.message, 'nft rejected /run/pvc/nft/networks/1000.nft (line 1): syntax error, unexpected newline');
  assert.equal(err.nftMessage, stderr.trim());
});

test('an error outside any file (`internal:0:0-0`) or without a location is charged to base.nft', async () => {
  const internal = await failure(new FakeExec().on('nft', { exitCode: 1, stderr: `internal:0:0-0: Error: Could not open file "${BASE}": No such file or directory\n` }));
  assert.equal(internal.file, BASE);
  assert.equal(internal.message, `nft rejected ${BASE}: Could not open file "${BASE}": No such file or directory`);
  const bare = await failure(new FakeExec().on('nft', { exitCode: 1, stderr: 'netlink: Error: Operation not permitted\n' }));
  assert.equal(bare.code, 'FIREWALL_REJECTED');
  assert.equal(bare.message, `nft rejected ${BASE}: netlink: Error: Operation not permitted`);
  const silent = await failure(new FakeExec().on('nft', { exitCode: 3 }));
  assert.equal(silent.message, `nft rejected ${BASE}: exit status 3`);
});

test('nft missing: not started, 127, or `ip netns exec` cannot exec it', async () => {
  const thrown = await failure(new FakeExec().on('nft', () => Promise.reject(new ExecError('nft -c -f x: could not run'))));
  assert.equal(thrown.code, 'FIREWALL_NFT_UNAVAILABLE');
  assert.equal(thrown.message, 'cannot run nft to load /run/pvc/nft/base.nft: nft -c -f x: could not run');
  const enoent = await failure(new FakeExec().on('nft', () => Promise.reject(new ExecError('nft -c -f x: Command failed with ENOENT: nft -c -f x\nspawn nft ENOENT'))));
  assert.equal(enoent.message, 'cannot run nft to load /run/pvc/nft/base.nft: nft not found (is nftables installed?)');
  const unmatched = await failure(new FakeExec()); // the fake answers 127 "command not found"
  assert.equal(unmatched.code, 'FIREWALL_NFT_UNAVAILABLE');
  assert.match(unmatched.message, /nft: command not found/);
  const netns = await failure(new FakeExec().on('ip', { exitCode: 1, stderr: 'exec of "nft" failed: No such file or directory\n' }), ['ip', 'netns', 'exec', 'n', 'nft']);
  assert.equal(netns.code, 'FIREWALL_NFT_UNAVAILABLE');
  assert.match(netns.message, /exec of "nft" failed/);
});

test('deadline and shutdown', async () => {
  const slow = await failure(new FakeExec().on('nft', () => Promise.reject(new TimeoutError('nft -c -f x', 1234))));
  assert.equal(slow.code, 'FIREWALL_TIMEOUT');
  assert.equal(slow.retryable, true);
  assert.match(slow.message, /timed out after 1234 ms; \/run\/pvc\/nft\/base\.nft not loaded$/);
  const aborted = await failure(new FakeExec().on('nft', () => Promise.reject(new AbortedError('nft'))));
  assert.equal(aborted.code, 'FIREWALL_ABORTED');
});

test('no command configured', async () => {
  const err = await failure(new FakeExec(), []);
  assert.equal(err.code, 'FIREWALL_NFT_UNAVAILABLE');
});
