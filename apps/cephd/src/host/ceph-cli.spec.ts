import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeExec, rejectionOf } from '@pvc/runtime';
import { CephCommandError, CephOutputError, cephReason, cephToolEnv, createCephCli } from './ceph-cli.js';

const opts = { timeoutMs: 1_000 };

test('json: appends --format json, parses stdout, empty output is null', async () => {
  const exec = new FakeExec().on('ceph health', { stdout: '{"status":"HEALTH_OK","checks":{}}\n' }).on('rbd ls', { stdout: '' });
  const cli = createCephCli(exec);
  assert.deepEqual(await cli.json('ceph', ['health'], opts), { status: 'HEALTH_OK', checks: {} });
  assert.equal(await cli.json('rbd', ['ls', 'vms'], opts), null);
  assert.deepEqual(exec.lines(), ['ceph health --format json', 'rbd ls vms --format json']);
});

test('a failing command throws CephCommandError with the tool\'s own reason line', async () => {
  const stderr = '2026-11-26T10:00:00 7f librbd::image::OpenRequest: failed\nrbd: error opening image x: (2) No such file or directory\n2026 7f other thread noise\n';
  const cli = createCephCli(new FakeExec().on('rbd info', { exitCode: 2, stderr }));
  const err = await rejectionOf(cli.json('rbd', ['info', 'vms/x'], opts), CephCommandError);
  assert.equal(err.reason, 'rbd: error opening image x: (2) No such file or directory');
  assert.match(err.message, /^rbd info vms\/x --format: rbd: error opening image x/);
});

test('ceph "Error EXXX:" lines are the reason; without any line, the exit code', () => {
  assert.equal(cephReason('ceph', "noise\nError EEXIST: pool 'vms' already exists\n", 17), "Error EEXIST: pool 'vms' already exists");
  assert.equal(cephReason('ceph', '', 1), 'exit 1');
  assert.equal(cephReason('rados', 'a\nlast line\n', 1), 'last line');
});

test('a log line inside the tool\'s own line (seen on Ceph 16 under load) is taken out and the line joined again', () => {
  const log = '2026-11-26T18:38:01.123+0000 7f1d245c4380 -1 librbd: Could not tell if xxx already exists\n';
  assert.equal(cephReason('rbd', `rbd: create error: ${log}(36) File name too long\n`, 36), 'rbd: create error: (36) File name too long');
  // Only log lines: the last of them.
  assert.equal(cephReason('rbd', log, 1), log.trim());
});

test('a log line glued to the tool\'s own line (no newline between) is cut off', () => {
  const stderr = 'rbd: create error: (36) File name too long2026-11-26T17:09:24.208+0000 7f1d245c4380 -1 librbd: Could not tell if xxx already exists\n';
  assert.equal(cephReason('rbd', stderr, 36), 'rbd: create error: (36) File name too long');
});

test('malformed JSON throws CephOutputError naming the command', async () => {
  const cli = createCephCli(new FakeExec().on('ceph df', { stdout: '{"stats": ' }));
  const err = await rejectionOf(cli.json('ceph', ['df'], opts), CephOutputError);
  assert.match(err.message, /ceph df --format json: malformed JSON output/);
});

test('text returns stdout; env is passed to every command', async () => {
  let seen: Record<string, string> | undefined;
  const exec = new FakeExec().on('ceph status', (_c, o) => ((seen = o.env), { exitCode: 0, stdout: '  cluster:\n', stderr: '' }));
  assert.equal(await createCephCli(exec, { CEPH_CONF: '/x/ceph.conf' }).text('ceph', ['status'], opts), '  cluster:\n');
  assert.equal(seen?.['CEPH_CONF'], '/x/ceph.conf');
  assert.match(seen?.['CEPH_ARGS'] ?? '', /--log_to_stderr=false --err_to_stderr=false$/);
});

test('cephToolEnv keeps librados log lines off stderr, after the CEPH_ARGS cephd was given', () => {
  assert.deepEqual(cephToolEnv(undefined), { CEPH_ARGS: '--log_to_stderr=false --err_to_stderr=false' });
  assert.deepEqual(cephToolEnv('--id pvc'), { CEPH_ARGS: '--id pvc --log_to_stderr=false --err_to_stderr=false' });
  assert.deepEqual(cephToolEnv(undefined, { CEPH_CONF: '/c', CEPH_ARGS: '--id x' }), { CEPH_CONF: '/c', CEPH_ARGS: '--id x --log_to_stderr=false --err_to_stderr=false' });
});
