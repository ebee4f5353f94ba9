// cephd as a real process: storage disabled (stats say so, lock flush refused clearly), storage
// enabled against a real ZooKeeper (local OSD count), the primary role over the real socket.
// With storage enabled but no Ceph cluster configured (CEPH_CONF names an empty file), FlushLocks
// runs the real `rbd` (ceph-common, installed by scripts/setup.sh) through the real Exec and must
// report each image as failed, never fail as a whole. Real locks on a real one-host Ceph:
// tests/integration/ceph/rbd-locks.test.ts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { CEPHD, PRIMARY_ROLE, rpcClient, RpcError } from '@pvc/rpc';
import { realClock, rejectionOf } from '@pvc/runtime';
import { connectZk, type RealZkClient } from '@pvc/zk';
import { waitUntil } from '../../support/wait.js';
import { ZkTestServer } from '../../support/zk-server.js';
import { logLines, startService, type ServiceProcess } from './service-process.js';

describe('cephd with storage disabled (built dist/main.js)', () => {
  let cephd: ServiceProcess;
  before(async () => {
    cephd = await startService('cephd', [['pvc.functions.enable_storage', false]]);
  });
  after(async () => {
    await cephd?.cleanup();
  });

  test('getStorageStats: not enabled, 0 OSDs; flushLocks refused naming the node; setPrimary round trip', async () => {
    const client = rpcClient(cephd.target, CEPHD);
    const role = rpcClient(cephd.target, PRIMARY_ROLE);
    try {
      assert.deepEqual(await client.getStorageStats({}, { deadlineMs: 1000 }), { enabled: false, osdCount: 0 });
      const err = await rejectionOf(client.flushLocks({ images: ['vms/vm1_disk0'], mode: 'FLUSH_MODE_UNSPECIFIED', deadNode: '' }, { deadlineMs: 1000 }), RpcError);
      assert.match(err.message, /flushLocks: storage is not enabled on hv1$/);
      assert.equal(err.retryable, false);
      assert.deepEqual(await role.setPrimary({ primary: true, reason: 'takeover' }, { deadlineMs: 1000 }), { primary: true });
      assert.deepEqual(await role.setPrimary({ primary: true, reason: 'again' }, { deadlineMs: 1000 }), { primary: true });
      assert.deepEqual(await role.setPrimary({ primary: false, reason: 'relinquish' }, { deadlineMs: 1000 }), { primary: false });
      // The log lines travel through the child's stdout pipe: the reply can arrive before the last of them.
      await waitUntil(() => logLines(cephd, /^primary role: /), { what: "two 'primary role' log lines on cephd's stdout", until: (l) => l.length >= 2 });
      assert.deepEqual(logLines(cephd, /^primary role: /).map((l) => [l.msg, l.reason]), [
        ['primary role: primary', 'takeover'],
        ['primary role: secondary', 'relinquish'],
      ]);
    } finally {
      client.close();
      role.close();
    }
    assert.equal(await cephd.stop(), 0, cephd.output());
  });
});

describe('cephd with storage enabled (real ZooKeeper; no Ceph cluster configured)', () => {
  let zk: ZkTestServer;
  let admin: RealZkClient;
  let cephd: ServiceProcess;
  before(async () => {
    zk = await ZkTestServer.start();
    admin = await connectZk({ hosts: ['127.0.0.1'], port: zk.port, clock: realClock });
    for (const [id, node] of [['0', 'hv1'], ['1', 'hv2'], ['2', 'hv1']] as const) {
      await admin.ensurePath(`/ceph/osds/${id}`);
      await admin.write([[`/ceph/osds/${id}/node`, node]]);
    }
    cephd = await startService('cephd', [
      ['pvc.functions.enable_storage', true],
      ['pvc.cluster.coordinators', ['localhost']],
      ['pvc.database', { zookeeper: { port: zk.port } }],
    ], { CEPH_CONF: '/dev/null' });
  });
  after(async () => {
    await cephd?.cleanup();
    await admin?.close();
    await zk?.destroy();
  });

  test('getStorageStats counts the OSDs whose node is hv1', async () => {
    const client = rpcClient(cephd.target, CEPHD);
    try {
      let stats = await client.getStorageStats({}, { deadlineMs: 1000 });
      for (let i = 0; i < 50 && stats.osdCount === 0; i++) {
        await realClock.sleep(200); // the ZooKeeper session may still be opening
        stats = await client.getStorageStats({}, { deadlineMs: 1000 });
      }
      assert.deepEqual(stats, { enabled: true, osdCount: 2 });
    } finally {
      client.close();
    }
  });

  test('flushLocks with no cluster to reach: each image reported failed, bad names refused, no whole-call error', async () => {
    assert.equal(spawnSync('sh', ['-c', 'command -v rbd']).status, 0, 'rbd is missing: install ceph-common (scripts/setup.sh)');
    const client = rpcClient(cephd.target, CEPHD);
    try {
      const r = await client.flushLocks({ images: ['vms/vm1_disk0', '-x/y'], mode: 'FLUSH_MODE_UNSPECIFIED', deadNode: '' }, { deadlineMs: 5000 });
      assert.deepEqual(r.flushed, []);
      assert.equal(r.failed.length, 2, r.failed.join('\n'));
      // cephd's librados client (the default) finds no monitor in the empty config.
      assert.equal(r.failed[0], 'vms/vm1_disk0: lock list failed: rados_connect: (2) ENOENT (no monitor address in the Ceph config (mon_host))');
      assert.equal(r.failed[1], '-x/y: not a pool/volume image name');
    } finally {
      client.close();
    }
    assert.equal(await cephd.stop(), 0, cephd.output());
  });
});
