import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addRpcService, CEPHD, PRIMARY_ROLE, socketPath, startLocalServer } from '@pvc/rpc';
import { silentLogger, withTempDir } from '@pvc/runtime';
import { GrpcPeers } from './peers-grpc.js';

test('duties off with netd not running: cephd is still asked, and the error names netd\'s socket; on stops at netd', () =>
  withTempDir('pvc-peers-', async (dir) => {
    const asked: boolean[] = [];
    const server = await startLocalServer({
      service: 'cephd', node: 'hv1', version: '0', logger: silentLogger(), socketPath: socketPath(dir, 'cephd'),
      register: (s) => addRpcService(s, PRIMARY_ROLE, { setPrimary: (req) => (asked.push(req.primary), Promise.resolve({ primary: req.primary })) }),
    });
    const peers = new GrpcPeers(dir);
    try {
      await assert.rejects(peers.setPrimaryDuties(false, 'relinquish', { deadlineMs: 1000 }), /netd\.sock/);
      assert.deepEqual(asked, [false], 'cephd switched off although netd did not answer');
      await assert.rejects(peers.setPrimaryDuties(true, 'takeover', { deadlineMs: 1000 }), /netd\.sock/);
      assert.deepEqual(asked, [false], 'not switched on while netd is down');
    } finally {
      peers.close();
      await server.close();
    }
  }));

test('fence recovery asks cephd to flush in FORCE mode (every lock of the dead node\'s images), naming the dead node', () =>
  withTempDir('pvc-peers-', async (dir) => {
    const asked: [string[], string | undefined, string | undefined][] = [];
    const server = await startLocalServer({
      service: 'cephd', node: 'hv1', version: '0', logger: silentLogger(), socketPath: socketPath(dir, 'cephd'),
      register: (s) => addRpcService(s, CEPHD, {
        getStorageStats: () => Promise.resolve({ enabled: true, osdCount: 0 }),
        flushLocks: (req) => (asked.push([req.images, req.mode, req.deadNode]), Promise.resolve({ flushed: req.images, failed: [], held: [] })),
      }),
    });
    const peers = new GrpcPeers(dir);
    try {
      assert.deepEqual(await peers.flushRbdLocks(['vms/a', 'vms/b'], 'hv3', { deadlineMs: 1000 }), { flushed: ['vms/a', 'vms/b'], failed: [], held: [] });
      assert.deepEqual(asked, [[['vms/a', 'vms/b'], 'FLUSH_MODE_FORCE', 'hv3']]);
    } finally {
      peers.close();
      await server.close();
    }
  }));
