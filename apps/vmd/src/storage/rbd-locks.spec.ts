import { test } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger, withTempDir } from '@pvc/runtime';
import { addRpcService, CEPHD, socketPath, startLocalServer } from '@pvc/rpc';
import { cephdRbdLocks } from './rbd-locks.js';

// The real adapter over a real gRPC server on cephd's socket path (the handler stands in for
// cephd's rbd work: Ceph is not installed here).
test('cephdRbdLocks calls CephdService.FlushLocks on <dynamic_directory>/cephd socket and maps the answer', () =>
  withTempDir('pvc-vmd-rbd-', async (dir) => {
    const asked: [string[], string | undefined][] = [];
    const server = await startLocalServer({
      service: 'cephd', node: 'hv1', version: '0', logger: silentLogger(), socketPath: socketPath(dir, 'cephd'),
      register: (s) => addRpcService(s, CEPHD, {
        getStorageStats: () => Promise.resolve({ enabled: true, osdCount: 0 }),
        flushLocks: (req) => (asked.push([req.images, req.mode]), Promise.resolve({
          flushed: req.images.filter((i) => i !== 'vms/held'),
          failed: req.images.filter((i) => i === 'vms/held').map((i) => `${i}: locked by client.9 at 10.254.0.2:0/9`),
          held: [{ image: 'vms/held', lockId: 'auto 9', locker: 'client.9', address: '10.254.0.2:0/9' }],
        })),
      }),
    });
    const locks = cephdRbdLocks(dir);
    try {
      assert.deepEqual(await locks.flush(['vms/a', 'vms/held'], { deadlineMs: 2000 }), {
        flushed: ['vms/a'],
        failed: ['vms/held: locked by client.9 at 10.254.0.2:0/9'],
        held: [{ image: 'vms/held', lockId: 'auto 9', locker: 'client.9', address: '10.254.0.2:0/9' }],
      });
      assert.deepEqual(asked, [[['vms/a', 'vms/held'], 'FLUSH_MODE_OWN_STALE']], 'a start asks for own stale locks only');
    } finally {
      locks.close();
      await server.close();
    }
  }));

test('cephdRbdLocks rejects when cephd does not listen (the guard turns that into a retry)', () =>
  withTempDir('pvc-vmd-rbd-', async (dir) => {
    const locks = cephdRbdLocks(dir);
    try {
      await assert.rejects(locks.flush(['vms/a'], { deadlineMs: 500 }));
    } finally {
      locks.close();
    }
  }));
