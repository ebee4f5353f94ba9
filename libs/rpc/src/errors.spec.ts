import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { AbortedError, PvcError, TimeoutError } from '@pvc/runtime';
import { fromGrpcError, grpcStatusFor, PVC_CODE_KEY, PVC_RETRYABLE_KEY, RpcError, toGrpcError } from './index.js';

const S = grpc.status;

test('PvcError codes map to a gRPC status by the documented rules (first match wins)', () => {
  const cases: [string, boolean, grpc.status][] = [
    ['TIMEOUT', true, S.DEADLINE_EXCEEDED],
    ['LIBVIRT_TIMEOUT', true, S.DEADLINE_EXCEEDED],
    ['OPERATION_TIMEOUT', true, S.DEADLINE_EXCEEDED],
    ['ABORTED', false, S.CANCELLED],
    ['VM_NOT_FOUND', false, S.NOT_FOUND],
    ['NOT_FOUND', false, S.NOT_FOUND],
    ['NO_NODE', false, S.NOT_FOUND],
    ['NO_DOMAIN', false, S.NOT_FOUND],
    ['UNKNOWN_VM', false, S.NOT_FOUND],
    ['NODE_EXISTS', false, S.ALREADY_EXISTS],
    ['BAD_XML', false, S.INVALID_ARGUMENT],
    ['CONFIG_INVALID', false, S.INVALID_ARGUMENT],
    ['INVALID_VM', false, S.INVALID_ARGUMENT],
    ['INTERNAL', false, S.INTERNAL],
    ['NOT_READY', true, S.UNAVAILABLE],
    ['LIBVIRT_UNAVAILABLE', true, S.UNAVAILABLE],
    ['STORAGE_DISABLED', false, S.FAILED_PRECONDITION],
    ['DUTY_STOP_FAILED', false, S.FAILED_PRECONDITION],
  ];
  for (const [code, retryable, want] of cases) {
    assert.equal(S[grpcStatusFor(code, retryable)], S[want], code);
  }
});

test('toGrpcError carries code and retry hint as metadata; a plain Error is INTERNAL with its message only', () => {
  const pvc = toGrpcError(new PvcError('NOT_READY', 'netd is still starting', { retryable: true }));
  assert.equal(pvc.code, S.UNAVAILABLE);
  assert.equal(pvc.details, 'netd is still starting');
  assert.deepEqual(pvc.metadata.get(PVC_CODE_KEY), ['NOT_READY']);
  assert.deepEqual(pvc.metadata.get(PVC_RETRYABLE_KEY), ['true']);

  const plain = toGrpcError(new TypeError('x is undefined'));
  assert.equal(plain.code, S.INTERNAL);
  assert.equal(plain.details, 'x is undefined');
  assert.deepEqual(plain.metadata.get(PVC_CODE_KEY), ['INTERNAL']);
  assert.deepEqual(plain.metadata.get(PVC_RETRYABLE_KEY), ['false']);
  assert.equal(toGrpcError('a string').details, 'a string');
});

test('each way round: code, message and retry hint survive toGrpcError → fromGrpcError', () => {
  for (const err of [
    new PvcError('STORAGE_DISABLED', 'storage is not enabled on hv1'),
    new TimeoutError('rbd lock list', 10_000),
    new AbortedError('flush'),
    new PvcError('NOT_READY', 'cephd is still starting', { retryable: true }),
  ]) {
    const back = fromGrpcError(toGrpcError(err), 'flushLocks');
    assert.ok(back instanceof RpcError && back instanceof PvcError);
    assert.equal(back.code, err.code);
    assert.equal(back.retryable, err.retryable);
    assert.equal(back.remoteMessage, err.message);
    assert.equal(back.message, `flushLocks: ${err.message}`);
    assert.equal(back.method, 'flushLocks');
  }
});

test('a status without pvc metadata (transport failure, old server) maps from the status code', () => {
  const cases: [grpc.status, string, boolean][] = [
    [S.DEADLINE_EXCEEDED, 'RPC_TIMEOUT', true],
    [S.UNAVAILABLE, 'RPC_UNAVAILABLE', true],
    [S.CANCELLED, 'RPC_CANCELLED', false],
    [S.INTERNAL, 'INTERNAL', false],
    [S.UNKNOWN, 'INTERNAL', false],
    [S.NOT_FOUND, 'RPC_NOT_FOUND', false],
    [S.INVALID_ARGUMENT, 'RPC_INVALID_ARGUMENT', false],
    [S.UNIMPLEMENTED, 'RPC_UNIMPLEMENTED', false],
  ];
  for (const [status, code, retryable] of cases) {
    const err = fromGrpcError({ code: status, details: 'boom', metadata: new grpc.Metadata() });
    assert.equal(err.code, code, S[status]);
    assert.equal(err.retryable, retryable, S[status]);
    assert.equal(err.status, status);
    assert.equal(err.message, 'boom');
  }
  assert.equal(fromGrpcError({ code: S.DEADLINE_EXCEEDED }, 'getResources').message, 'getResources: DEADLINE_EXCEEDED');
});
