import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PrimaryRoleError, SUPERVISOR_GONE_EXIT_MS } from '@pvc/rpc';
import { classifyDutyFailure, DUTIES_OFF_BOUNDS, dutiesOffVerdict } from './duties-off.js';
import { realErrors } from './rig.js';

test('a missing socket (ENOENT) or a refused one (ECONNREFUSED): not running, naming the service from its socket', () => {
  assert.deepEqual(classifyDutyFailure(realErrors.enoent()), { kind: 'not-running', service: 'netd', detail: 'connect ENOENT /run/pvc/sockets/netd.sock' });
  assert.deepEqual(classifyDutyFailure(realErrors.refused()), { kind: 'not-running', service: 'cephd', detail: 'connect ECONNREFUSED /run/pvc/sockets/cephd.sock' });
});

test('a deadline or an unknown error: unanswered (the service may be alive); the service is unknown then', () => {
  const t = classifyDutyFailure(realErrors.timeout());
  assert.equal(t.kind, 'unanswered');
  assert.equal(t.service, 'netd or cephd');
  assert.equal(classifyDutyFailure(new Error('setPrimaryDuties: UNAVAILABLE (peer down)')).kind, 'unanswered');
});

test('a duty that did not stop (the handler said so): stop-failed, even if its message mentions ENOENT', () => {
  assert.deepEqual(classifyDutyFailure(realErrors.stopFailed()), { kind: 'stop-failed', service: 'netd', detail: 'setPrimary: netd: primary duties failed to stop: upstream-ip: connect ENOENT /x' });
  const local = new PrimaryRoleError('DUTY_STOP_FAILED', 'cephd: primary duties failed to stop: stats: boom');
  assert.equal(classifyDutyFailure(local).service, 'cephd');
});

test('the verdict: secondary only when stopped, not running, or the service left the role; the reason says which', () => {
  assert.deepEqual(dutiesOffVerdict({ kind: 'stopped', attempts: 1 }), { router: 'secondary', reason: 'duties stopped' });
  const gone = dutiesOffVerdict({ ...classifyDutyFailure(realErrors.enoent()), attempts: 4, elapsedMs: 3_500 });
  assert.deepEqual(gone, { router: 'secondary', reason: 'duties not confirmed stopped: netd unreachable (connect ENOENT /run/pvc/sockets/netd.sock); it is not running' });
  const hung = dutiesOffVerdict({ ...classifyDutyFailure(realErrors.timeout()), attempts: 2, elapsedMs: 8_000 });
  assert.equal(hung.router, 'relinquish');
  assert.match(hung.reason, /^duties not confirmed stopped: netd or cephd did not answer \(setPrimary: Deadline exceeded/);
  assert.equal(dutiesOffVerdict({ ...classifyDutyFailure(realErrors.stopFailed()), attempts: 1, elapsedMs: 0 }).router, 'secondary');
});

test('the bound leaves a step-down room before a stopping keepaliled is killed (15 s), with a ZK write (5 s) after it', () => {
  assert.ok(DUTIES_OFF_BOUNDS.totalMs + 5_000 < SUPERVISOR_GONE_EXIT_MS, `${DUTIES_OFF_BOUNDS.totalMs} ms`);
  assert.ok(DUTIES_OFF_BOUNDS.attemptMs < DUTIES_OFF_BOUNDS.totalMs);
});
