import { test } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger, withTempDir } from '@pvc/runtime';
import { addRpcService, rpcClient, type RpcServiceDef, RpcError, startLocalServer, unixTarget, socketPath, VMD, PRIMARY_ROLE, CEPHD, NETD, KEEPALIVED, SUPERVISOR, WITNESS } from './index.js';

test('every API definition names a service its .proto really has', () => {
  const defs: RpcServiceDef[] = [VMD, PRIMARY_ROLE, CEPHD, NETD, KEEPALIVED, SUPERVISOR, WITNESS];
  for (const def of defs) {
    const client = rpcClient(unixTarget('/nonexistent.sock'), def);
    assert.ok(Object.keys(client).length > 1, Object.values(def)[0]?.path);
    client.close();
  }
});

test('a typed service answers a typed client; a handler that throws is an error naming its message', () =>
  withTempDir('pvc-rpc-', async (dir) => {
    const path = socketPath(dir, 'vmd');
    let stopReason = '';
    const server = await startLocalServer({
      service: 'vmd', node: 'hv1', version: '0', logger: silentLogger(), socketPath: path,
      register: (s) =>
        addRpcService(s, VMD, {
          getResources: () => Promise.resolve({ runningDomains: ['u1', 'u2'], memAllocMib: 1024, memProvMib: 2048, vcpuAlloc: 3 }),
          stopAll: (req) => {
            stopReason = req.reason;
            return Promise.reject(new Error('libvirt is gone'));
          },
        }),
    });
    const client = rpcClient(unixTarget(path), VMD);
    try {
      const res = await client.getResources({}, { deadlineMs: 1000 });
      assert.deepEqual(res, { runningDomains: ['u1', 'u2'], memAllocMib: 1024, memProvMib: 2048, vcpuAlloc: 3 });
      await assert.rejects(client.stopAll({ reason: 'suicide' }), (err: unknown) => err instanceof RpcError && /libvirt is gone/.test(err.message));
      assert.equal(stopReason, 'suicide');
    } finally {
      client.close();
      await server.close();
    }
  }));

test('a call to a service that is not there fails within its deadline', async () => {
  const client = rpcClient(unixTarget('/nonexistent/pvc/vmd.sock'), VMD);
  const t0 = performance.now();
  try {
    await assert.rejects(client.getResources({}, { deadlineMs: 300 }), RpcError);
  } finally {
    client.close();
  }
  assert.ok(performance.now() - t0 < 2000);
});
