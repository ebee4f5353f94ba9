import { test } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger, withTempDir } from '@pvc/runtime';
import { addRpcService, rpcClient, type CephdApi, type RpcClient, type RpcHandlers, type RpcServiceDef, RpcError, type VmdApi, startLocalServer, unixTarget, socketPath, VMD, PRIMARY_ROLE, CEPHD, NETD, KEEPALIVED, SUPERVISOR, WITNESS } from './index.js';

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

/**
 * Compile-time contract (`npx tsc -b` fails if it breaks; the @ts-expect-error lines must stay
 * errors): the messages are exactly the generated ones, so a field renamed in a .proto is an error
 * at writers and readers alike, never a silent default.
 */
test('messages are exact: a missing, unknown or misspelt field does not compile', () => {
  const client = (c: RpcClient<CephdApi>): void => {
    // @ts-expect-error every request field is required (deadNode left out)
    void c.flushLocks({ images: [], mode: 'FLUSH_MODE_FORCE' });
    // @ts-expect-error a field FlushLocksRequest does not have
    void c.flushLocks({ images: [], mode: 'FLUSH_MODE_FORCE', deadNode: '', fencedNode: '' });
    // @ts-expect-error an enum value the proto does not have
    void c.flushLocks({ images: [], mode: 'FORCE', deadNode: '' });
    void c.getStorageStats({}).then((s) => {
      // @ts-expect-error a response field the proto does not have (it is osd_count)
      void s.osds;
    });
  };
  const server: Pick<RpcHandlers<VmdApi>, 'getResources'> = {
    // @ts-expect-error a response with a misspelt field (memAllocMiB)
    getResources: async () => ({ runningDomains: [], memAllocMiB: 0, memProvMib: 0, vcpuAlloc: 0 }),
  };
  assert.equal(typeof client, 'function');
  assert.equal(typeof server.getResources, 'function');
});
