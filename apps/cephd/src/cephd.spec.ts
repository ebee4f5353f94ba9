import { test } from 'node:test';
import assert from 'node:assert/strict';
import { captureLogger, FakeExec, rejectionOf, silentLogger, VirtualClock, type Logger } from '@pvc/runtime';
import { FakeZkServer } from '@pvc/zk/testing';
import type { ZkClient } from '@pvc/zk';
import { Cephd, StorageDisabledError } from './cephd.js';
import type { RadosClient } from './host/librados.js';
import { FakeRados } from './host/fake-rados.js';
import { PrimaryRole } from '@pvc/rpc';

function cephd(opts: { enabled: boolean; zk?: ZkClient; exec?: FakeExec; logger?: Logger; rados?: RadosClient }): Cephd {
  const logger = opts.logger ?? silentLogger();
  return new Cephd({
    node: 'hv1',
    storageEnabled: opts.enabled,
    storageAddress: '10.254.0.1',
    zk: opts.zk,
    exec: opts.exec ?? new FakeExec(),
    rados: opts.rados,
    logger,
    role: new PrimaryRole({ service: 'cephd', logger, duties: [] }),
    rbdTimeoutMs: 5000,
    zkTimeoutMs: 800,
  });
}

/** A fake ZooKeeper whose `/ceph/osds/<id>/node` keys are `osds`; `zk` is cephd's session. */
async function zkWithOsds(osds: readonly (readonly [string, string])[]): Promise<{ zk: ZkClient; close: () => Promise<void> }> {
  const server = new FakeZkServer({ clock: new VirtualClock(1_700_000_000_000) });
  const admin = await server.connect();
  const zk = await server.connect();
  for (const [id, node] of osds) {
    await admin.ensurePath(`/ceph/osds/${id}/node`);
    await admin.set(`/ceph/osds/${id}/node`, node);
  }
  return { zk, close: async () => (await zk.close(), await admin.close()) };
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

test('a FORCE flush naming the fenced node marks its OSDs down (from ZK) while it flushes; own mode and no node do not', async () => {
  const { zk, close } = await zkWithOsds([['0', 'hv1'], ['1', 'hv3'], ['2', 'hv3'], ['3', 'hv2']]);
  const exec = new FakeExec().on('rbd lock list --format json vms/a', { stdout: '[]' }).on('ceph osd down', {});
  const log = captureLogger('cephd');
  const c = cephd({ enabled: true, zk, exec, logger: log.logger });
  assert.deepEqual(await c.flushLocks(['vms/a'], 'force', 'hv3'), { flushed: ['vms/a'], failed: [], held: [] });
  assert.deepEqual(exec.lines().filter((l) => l.startsWith('ceph')), ['ceph osd down osd.1 osd.2']);
  assert.deepEqual(log.lines.find((l) => l.msg === 'marked the fenced node\'s OSDs down')?.osds, ['1', '2']);
  await c.flushLocks(['vms/a'], 'own', 'hv3');
  await c.flushLocks(['vms/a'], 'force');
  await c.flushLocks(['vms/a'], 'force', 'hv9');
  assert.equal(exec.lines().filter((l) => l.startsWith('ceph')).length, 1, 'own mode, no node, a node without OSDs: nothing marked');
  await close();
});

test('marking the fenced node\'s OSDs down fails: logged naming the node, the flush still answers', async () => {
  const { zk, close } = await zkWithOsds([['1', 'hv3']]);
  const exec = new FakeExec().on('rbd lock list --format json vms/a', { stdout: '[]' }).on('ceph osd down', { exitCode: 1, stderr: 'Error EACCES: access denied\n' });
  const log = captureLogger('cephd');
  const c = cephd({ enabled: true, zk, exec, logger: log.logger });
  assert.deepEqual(await c.flushLocks(['vms/a'], 'force', 'hv3'), { flushed: ['vms/a'], failed: [], held: [] });
  const warn = log.lines.find((l) => l.msg === 'could not mark the fenced node\'s OSDs down; Ceph will after its own grace');
  assert.equal(warn?.node, 'hv3');
  assert.match(String(warn?.err), /Error EACCES: access denied/);
  await close();
});

test('with the librados client: osd down is sent before the flush\'s first call; locks broken, failures per image with the errno', async () => {
  const { zk, close } = await zkWithOsds([['2', 'hv3']]);
  const rados = new FakeRados();
  rados.images.set('vms/a', [{ id: 'auto 1', locker: 'client.9', address: '10.254.0.3:0/9' }]);
  rados.images.set('vms/b', []);
  rados.knobs.breakErrno = new Map([['vms/c', 16]]);
  rados.images.set('vms/c', [{ id: 'auto 2', locker: 'client.8', address: '10.254.0.3:0/8' }]);
  const exec = new FakeExec();
  const c = cephd({ enabled: true, zk, exec, rados });
  const r = await c.flushLocks(['vms/a', 'vms/b', 'vms/c', 'vms/gone'], 'force', 'hv3');
  assert.deepEqual(r.flushed, ['vms/a', 'vms/b']);
  assert.deepEqual(r.failed, ['vms/c: lock remove failed: rbd_break_lock vms/c client.8 "auto 2": (16) EBUSY', 'vms/gone: lock list failed: rbd_open vms/gone: (2) ENOENT (no such image)']);
  assert.deepEqual(rados.calls.slice(0, 3), ['mon {"prefix":"osd down","ids":["2"]}', 'latest osdmap', 'list vms/a'], 'osd down, then the latest map, then the flush');
  assert.deepEqual(rados.images.get('vms/a'), []);
  assert.deepEqual(exec.lines(), [], 'no rbd or ceph process');
  await close();
});

test('with the librados client: own mode refuses a foreign holder and breaks nothing; a failing osd down is logged, the flush answers', async () => {
  const { zk, close } = await zkWithOsds([['2', 'hv3']]);
  const rados = new FakeRados();
  rados.images.set('vms/a', [{ id: 'auto 1', locker: 'client.9', address: '10.254.0.3:0/9' }, { id: 'auto 2', locker: 'client.7', address: '10.254.0.1:0/7' }]);
  const log = captureLogger('cephd');
  const c = cephd({ enabled: true, zk, rados, logger: log.logger });
  const own = await c.flushLocks(['vms/a'], 'own', 'hv3');
  assert.deepEqual(own.held.map((h) => h.locker), ['client.9']);
  assert.deepEqual(rados.calls, ['latest osdmap', 'list vms/a'], 'own mode: the latest map, then the list; no osd down, nothing broken');
  rados.knobs.monErrno = 110;
  const force = await c.flushLocks(['vms/a'], 'force', 'hv3');
  assert.deepEqual(force, { flushed: ['vms/a'], failed: [], held: [] });
  const warn = log.lines.find((l) => l.msg === 'could not mark the fenced node\'s OSDs down; Ceph will after its own grace');
  assert.match(String(warn?.err), /rados_mon_command osd down: \(110\) ETIMEDOUT/);
  await close();
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
