import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TcpRequestError } from '../health/host/tcp.js';
import { TimeoutError } from '@pvc/runtime';
import { classifyProbeError, classifySrvr } from './srvr.js';

/** A ZooKeeper 3.8 `srvr` reply of a follower. */
const FOLLOWER = `Zookeeper version: 3.8.0-5a02a05eddb59aee6ac762f7ea82e92a68eb9c0f, built on 2022-02-25 08:49 UTC
Latency min/avg/max: 0/0.4/12
Received: 1234
Sent: 1240
Connections: 7
Outstanding: 0
Zxid: 0x1000002a3
Mode: follower
Node count: 112
`;

test('srvr: leader, follower, observer and standalone serve', () => {
  for (const mode of ['leader', 'follower', 'observer', 'standalone']) {
    assert.deepEqual(classifySrvr(FOLLOWER.replace('Mode: follower', `Mode: ${mode}`)), { state: 'serving', detail: `mode ${mode}` });
  }
});

test('srvr: "not currently serving requests" and read-only are not serving (no quorum)', () => {
  assert.deepEqual(classifySrvr('This ZooKeeper instance is not currently serving requests\n'), { state: 'not-serving', detail: 'not currently serving requests' });
  assert.equal(classifySrvr(FOLLOWER.replace('Mode: follower', 'Mode: read-only')).state, 'not-serving');
});

test('srvr: an empty, foreign or non-whitelisted reply proves nothing (unknown)', () => {
  assert.deepEqual(classifySrvr(''), { state: 'unknown', detail: 'empty srvr reply' });
  assert.equal(classifySrvr('HTTP/1.1 400 Bad Request\r\n').state, 'unknown');
  assert.equal(classifySrvr('srvr is not executed because it is not in the whitelist.\n').state, 'unknown');
  assert.equal(classifySrvr(FOLLOWER.replace('Mode: follower', 'Mode: participant')).state, 'unknown');
});

test('probe errors: refused means no server listens (not serving); a timeout or reset proves nothing', () => {
  const refused = Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:2181'), { code: 'ECONNREFUSED' });
  assert.deepEqual(classifyProbeError(new TcpRequestError('hv1:2181', refused.message, refused)), { state: 'not-serving', detail: 'connection refused (no server listening)' });
  assert.equal(classifyProbeError(new TimeoutError('TCP request to hv1:2181', 500)).state, 'unknown');
  const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
  assert.equal(classifyProbeError(new TcpRequestError('hv1:2181', reset.message, reset)).state, 'unknown');
});
