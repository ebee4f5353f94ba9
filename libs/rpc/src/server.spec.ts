import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { silentLogger, withTempDir } from '@pvc/runtime';
import { checkHealth, getStatus, RpcBindError, RpcError, startLocalServer, unixTarget, socketPath } from './index.js';

const withDir = (fn: (dir: string) => Promise<void>): Promise<void> => withTempDir('pvc-rpc-', fn);

const base = { node: 'hv1', version: '0.1.0', logger: silentLogger() };

test('a local server serves health and status on a unix socket that is not world-writable', () =>
  withDir(async (dir) => {
    const path = socketPath(dir, 'vmd');
    const server = await startLocalServer({ ...base, service: 'vmd', socketPath: path });
    try {
      const mode = (await stat(path)).mode & 0o777;
      assert.equal(mode & 0o002, 0, `socket mode ${mode.toString(8)} is world-writable`);
      assert.equal(mode, 0o660);
      assert.equal((await stat(join(dir, 'sockets'))).mode & 0o777, 0o750);
      assert.equal(await checkHealth(unixTarget(path)), 'NOT_SERVING');
      server.setState('running');
      assert.equal(await checkHealth(unixTarget(path)), 'SERVING');
      assert.equal(await checkHealth(unixTarget(path), 'vmd'), 'SERVING');
      const status = await getStatus(unixTarget(path));
      assert.equal(status.service, 'vmd');
      assert.equal(status.node, 'hv1');
      assert.equal(status.state, 'running');
      assert.equal(status.pid, process.pid);
    } finally {
      await server.close();
    }
    await assert.rejects(stat(path), /ENOENT/);
  }));

test('a second server on the same socket is refused while the first runs', () =>
  withDir(async (dir) => {
    const path = socketPath(dir, 'netd');
    const first = await startLocalServer({ ...base, service: 'netd', socketPath: path });
    try {
      await assert.rejects(startLocalServer({ ...base, service: 'netd', socketPath: path }), (err: unknown) => {
        assert.ok(err instanceof RpcBindError);
        assert.match(err.message, /in use \(is netd already running\?\)/);
        return true;
      });
    } finally {
      await first.close();
    }
  }));

test('a stale socket file left by a crash is replaced', () =>
  withDir(async (dir) => {
    const path = socketPath(dir, 'cephd');
    const first = await startLocalServer({ ...base, service: 'cephd', socketPath: path });
    await first.close();
    await writeFile(path, '');
    const second = await startLocalServer({ ...base, service: 'cephd', socketPath: path });
    try {
      assert.equal((await getStatus(unixTarget(path))).service, 'cephd');
    } finally {
      await second.close();
    }
  }));

test('a call to a socket nobody serves fails within its deadline as a retryable RpcError', () =>
  withDir(async (dir) => {
    const started = Date.now();
    await assert.rejects(getStatus(unixTarget(join(dir, 'nobody.sock')), { deadlineMs: 300 }), (err: unknown) => {
      assert.ok(err instanceof RpcError);
      assert.equal(err.retryable, true);
      return true;
    });
    assert.ok(Date.now() - started < 2000, 'deadline not honoured');
  }));
