// A real grpc-js server and client over a temporary unix socket: handler errors keep their codes
// across the wire, and a handler's signal aborts when the client cancels or its deadline passes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stat } from 'node:fs/promises';
import * as grpc from '@grpc/grpc-js';
import { AbortedError, PvcError, rejectionOf, silentLogger, withTempDir } from '@pvc/runtime';
import { addRpcService, rpcClient, RpcError, socketPath, startLocalServer, unixTarget, VMD, type RpcClient, type RpcHandlers, type VmdApi } from './index.js';

const RESOURCES = { runningDomains: [], memAllocMib: 0, memProvMib: 0, vcpuAlloc: 0 };

/** Runs `fn` against a vmd-shaped server with `handlers` on a socket in a fresh temp dir. */
function withVmd(handlers: Partial<RpcHandlers<VmdApi>>, fn: (client: RpcClient<VmdApi>) => Promise<void>): Promise<void> {
  return withTempDir('pvc-rpc-', async (dir) => {
    const path = socketPath(dir, 'vmd');
    const server = await startLocalServer({
      service: 'vmd', node: 'hv1', version: '0', logger: silentLogger(), socketPath: path,
      register: (s) => addRpcService(s, VMD, {
        getResources: () => Promise.resolve(RESOURCES),
        stopAll: () => Promise.resolve({ stopped: [], failed: [] }),
        ...handlers,
      }),
    });
    const client = rpcClient(unixTarget(path), VMD);
    try {
      assert.equal((await stat(path)).mode & 0o777, 0o660, 'socket mode');
      await fn(client);
    } finally {
      client.close();
      await server.close();
    }
  });
}

/** `p`, or a rejection naming `what` after `ms` (a bound on waiting, not a sleep). */
async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, bound]);
  } finally {
    clearTimeout(timer);
  }
}

/** A promise and its resolver (Node 20 has no Promise.withResolvers). */
function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** A handler that blocks until its call's signal aborts; `started` and `aborted` resolve as that happens. */
function blockingHandler(): { handler: RpcHandlers<VmdApi>['stopAll']; started: Promise<void>; aborted: Promise<unknown> } {
  const started = deferred<void>();
  const aborted = deferred<unknown>();
  const handler: RpcHandlers<VmdApi>['stopAll'] = (_req, { signal }) => {
    started.resolve();
    return new Promise((_, reject) => {
      signal.addEventListener('abort', () => {
        aborted.resolve(signal.reason);
        reject(signal.reason as Error);
      }, { once: true });
    });
  };
  return { handler, started: started.promise, aborted: aborted.promise };
}

test('a handler PvcError arrives with the same code, message and retry hint', () =>
  withVmd({
    stopAll: () => Promise.reject(new PvcError('LIBVIRT_UNAVAILABLE', 'cannot connect to libvirt at qemu:///system', { retryable: true })),
    getResources: () => Promise.reject(new PvcError('UNKNOWN_VM', 'no VM named web1')),
  }, async (client) => {
    const err = await rejectionOf(client.stopAll({ reason: 'fence' }, { deadlineMs: 2000 }), RpcError);
    assert.ok(err instanceof PvcError);
    assert.equal(err.code, 'LIBVIRT_UNAVAILABLE');
    assert.equal(err.retryable, true);
    assert.equal(err.remoteMessage, 'cannot connect to libvirt at qemu:///system');
    assert.equal(err.message, 'stopAll: cannot connect to libvirt at qemu:///system');
    assert.equal(err.status, grpc.status.UNAVAILABLE);

    const missing = await rejectionOf(client.getResources({}, { deadlineMs: 2000 }), RpcError);
    assert.equal(missing.code, 'UNKNOWN_VM');
    assert.equal(missing.retryable, false);
    assert.equal(missing.status, grpc.status.NOT_FOUND);
  }));

test('a plain Error (thrown or rejected) arrives as INTERNAL with its message and no stack', () =>
  withVmd({
    stopAll: () => Promise.reject(new TypeError("Cannot read properties of undefined (reading 'uuid')")),
    getResources: () => {
      throw new Error('synchronous bug');
    },
  }, async (client) => {
    const err = await rejectionOf(client.stopAll({ reason: 'x' }, { deadlineMs: 2000 }), RpcError);
    assert.equal(err.code, 'INTERNAL');
    assert.equal(err.retryable, false);
    assert.equal(err.status, grpc.status.INTERNAL);
    assert.equal(err.remoteMessage, "Cannot read properties of undefined (reading 'uuid')");
    assert.doesNotMatch(err.message, /\n\s+at /);

    const sync = await rejectionOf(client.getResources({}, { deadlineMs: 2000 }), RpcError);
    assert.equal(sync.code, 'INTERNAL');
    assert.equal(sync.remoteMessage, 'synchronous bug');
  }));

test("the client's cancel aborts the handler's signal", async () => {
  const h = blockingHandler();
  await withVmd({ stopAll: h.handler }, async (client) => {
    const cancel = new AbortController();
    const call = client.stopAll({ reason: 'x' }, { deadlineMs: 30_000, signal: cancel.signal });
    await within(h.started, 5000, 'handler start');
    cancel.abort();
    const err = await rejectionOf(call, RpcError);
    assert.equal(err.code, 'RPC_CANCELLED');
    assert.equal(err.retryable, false);
    const reason = await within(h.aborted, 5000, "the handler's signal aborting");
    assert.ok(reason instanceof AbortedError, String(reason));
  });
});

test("a passed deadline aborts the handler's signal; the client sees a retryable RPC_TIMEOUT", async () => {
  const h = blockingHandler();
  await withVmd({ stopAll: h.handler }, async (client) => {
    const err = await rejectionOf(client.stopAll({ reason: 'x' }, { deadlineMs: 200 }), RpcError);
    assert.equal(err.code, 'RPC_TIMEOUT');
    assert.equal(err.retryable, true);
    assert.equal(err.status, grpc.status.DEADLINE_EXCEEDED);
    await within(h.aborted, 5000, "the handler's signal aborting");
  });
});

test("a handler that answered does not see its signal abort afterwards; a pre-aborted caller signal cancels at once", () => {
  const seen: AbortSignal[] = [];
  return withVmd({
    getResources: (_req, { signal, method }) => {
      assert.equal(method, 'getResources');
      seen.push(signal);
      return Promise.resolve(RESOURCES);
    },
  }, async (client) => {
    assert.deepEqual(await client.getResources({}, { deadlineMs: 2000 }), RESOURCES);
    assert.deepEqual(await client.getResources({}, { deadlineMs: 2000 }), RESOURCES);
    assert.equal(seen.length, 2);
    assert.equal(seen[0]?.aborted, false);
    const err = await rejectionOf(client.getResources({}, { deadlineMs: 2000, signal: AbortSignal.abort() }), RpcError);
    assert.equal(err.code, 'RPC_CANCELLED');
  });
});
