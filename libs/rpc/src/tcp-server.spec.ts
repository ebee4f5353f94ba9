import { test } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '@pvc/runtime';
import { addRpcService, checkHealth, isWildcardAddress, rpcClient, RpcBindError, RpcError, startTcpServer, tcpTarget, WITNESS } from './index.js';

const reach = { node: 'hv1', sessionConnected: false, serverState: 'not-serving', serverDetail: 'connection refused', msSinceKeepalive: 12_345 };

test('wildcard addresses are recognised in every spelling; real addresses are not', () => {
  for (const w of ['0.0.0.0', '::', '[::]', '0:0:0:0:0:0:0:0', '::0', '', ' ', '*', '000.0.0.0']) assert.equal(isWildcardAddress(w), true, w);
  for (const a of ['127.0.0.1', '10.0.0.1', '::1', 'fe80::1', 'hv1', '0.0.0.1']) assert.equal(isWildcardAddress(a), false, a);
});

test('a TCP server refuses a wildcard address before binding anything', async () => {
  for (const host of ['0.0.0.0', '::']) {
    await assert.rejects(
      startTcpServer({ service: 'witness', host, port: 0, logger: silentLogger(), register: () => undefined }),
      (err: unknown) => err instanceof RpcBindError && /refusing to listen on the wildcard address/.test(err.message),
    );
  }
});

test('a TCP server on one loopback address serves a typed client and health; other addresses get nothing', async () => {
  const server = await startTcpServer({
    service: 'witness', host: '127.0.0.2', port: 0, logger: silentLogger(),
    register: (s) => addRpcService(s, WITNESS, { getZkReach: () => Promise.resolve(reach) }),
  });
  const client = rpcClient(tcpTarget('127.0.0.2', server.port), WITNESS);
  const elsewhere = rpcClient(tcpTarget('127.0.0.3', server.port), WITNESS);
  try {
    assert.equal(server.address, `127.0.0.2:${server.port}`);
    assert.deepEqual(await client.getZkReach({}, { deadlineMs: 2_000 }), reach);
    assert.equal(await checkHealth(server.address, 'witness', { deadlineMs: 2_000 }), 'SERVING');
    await assert.rejects(elsewhere.getZkReach({}, { deadlineMs: 1_000 }), RpcError, 'bound to 127.0.0.2 only');
  } finally {
    client.close();
    elsewhere.close();
    await server.close();
  }
  const after = rpcClient(tcpTarget('127.0.0.2', server.port), WITNESS);
  try {
    await assert.rejects(after.getZkReach({}, { deadlineMs: 1_000 }), RpcError, 'closed');
  } finally {
    after.close();
  }
});

test('an address that is not local cannot be bound: a clear RpcBindError', async () => {
  await assert.rejects(
    startTcpServer({ service: 'witness', host: '192.0.2.1', port: 0, logger: silentLogger(), register: () => undefined }),
    (err: unknown) => err instanceof RpcBindError && /witness: cannot listen on 192\.0\.2\.1:0/.test(err.message),
  );
});

test('tcpTarget puts IPv6 addresses in brackets', () => {
  assert.equal(tcpTarget('::1', 7374), '[::1]:7374');
  assert.equal(tcpTarget('hv1', 7374), 'hv1:7374');
});
