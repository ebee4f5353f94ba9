import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeExec, rejectionOf, silentLogger, VirtualClock } from '@pvc/runtime';
import { FakeZkServer } from '@pvc/zk/testing';
import type { ZkClient } from '@pvc/zk';
import { Cephd, StorageDisabledError } from './cephd.js';
import { PrimaryRole } from '@pvc/rpc';

function cephd(opts: { enabled: boolean; zk?: ZkClient; exec?: FakeExec }): Cephd {
  const logger = silentLogger();
  return new Cephd({
    node: 'hv1',
    storageEnabled: opts.enabled,
    storageAddress: '10.254.0.1',
    zk: opts.zk,
    exec: opts.exec ?? new FakeExec(),
    logger,
    role: new PrimaryRole({ service: 'cephd', logger, duties: [] }),
    rbdTimeoutMs: 5000,
    zkTimeoutMs: 800,
  });
}

test('storage disabled: stats say so with 0 OSDs; flushLocks is refused naming the node, rbd never runs', async () => {
  const exec = new FakeExec();
  const c = cephd({ enabled: false, exec });
  assert.deepEqual(await c.getStorageStats(), { enabled: false, osdCount: 0 });
  const err = await rejectionOf(c.flushLocks(['vms/a'], 'force'), StorageDisabledError);
  assert.equal(err.code, 'STORAGE_DISABLED');
  assert.equal(err.message, 'storage is not enabled on hv1');
  assert.deepEqual(exec.lines(), []);
});

test('storage enabled: counts the OSDs whose node is us; keeps the last count while ZK is unreachable', async () => {
  const clock = new VirtualClock(1_700_000_000_000);
  const server = new FakeZkServer({ clock });
  const admin = await server.connect();
  const zk = await server.connect();
  const c = cephd({ enabled: true, zk });
  assert.deepEqual(await c.getStorageStats(), { enabled: true, osdCount: 0 }, '/ceph/osds absent');
  for (const [id, node] of [['0', 'hv1'], ['1', 'hv2'], ['2', 'hv1']] as const) {
    await admin.ensurePath(`/ceph/osds/${id}/node`);
    await admin.set(`/ceph/osds/${id}/node`, node);
  }
  await admin.ensurePath('/ceph/osds/3'); // being created: no node key yet
  assert.deepEqual(await c.getStorageStats(), { enabled: true, osdCount: 2 });
  server.disconnect(zk);
  await admin.set('/ceph/osds/1/node', 'hv1');
  assert.deepEqual(await c.getStorageStats(), { enabled: true, osdCount: 2 }, 'last known while suspended');
  server.reconnect(zk);
  await clock.advance(10);
  assert.deepEqual(await c.getStorageStats(), { enabled: true, osdCount: 3 });
  await zk.close();
  await admin.close();
});

test('storage enabled: flushLocks reports per image and never rejects for rbd failures', async () => {
  const exec = new FakeExec().on('rbd lock list --format json vms/a', { stdout: '[]' });
  const c = cephd({ enabled: true, exec });
  assert.deepEqual(await c.flushLocks(['vms/a', 'vms/b'], 'own'), { flushed: ['vms/a'], failed: ['vms/b: rbd lock list failed: rbd: command not found'], held: [] });
});

test('storage enabled: the own mode compares with the configured storage address; force removes all', async () => {
  const locks = JSON.stringify([{ id: 'auto 7', locker: 'client.7', address: '10.254.0.2:0/7' }]);
  const exec = new FakeExec().on('rbd lock list --format json vms/a', { stdout: locks }).on('rbd lock remove', {});
  const c = cephd({ enabled: true, exec });
  const own = await c.flushLocks(['vms/a'], 'own');
  assert.deepEqual(own.held, [{ image: 'vms/a', lockId: 'auto 7', locker: 'client.7', address: '10.254.0.2:0/7' }]);
  assert.match(own.failed[0] ?? '', /storage address is 10\.254\.0\.1/);
  assert.deepEqual(await c.flushLocks(['vms/a'], 'force'), { flushed: ['vms/a'], failed: [], held: [] });
  assert.deepEqual(exec.lines(), ['rbd lock list --format json vms/a', 'rbd lock list --format json vms/a', 'rbd lock remove vms/a auto 7 client.7']);
});

test('run drops the primary role at shutdown', async () => {
  const c = cephd({ enabled: false });
  const ac = new AbortController();
  const running = c.run(ac.signal);
  assert.equal(await c.setPrimary(true, 'takeover'), true);
  ac.abort();
  await running;
  assert.equal(c.role.current, 'secondary');
});
