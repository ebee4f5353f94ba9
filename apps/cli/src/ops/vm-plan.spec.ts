import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planStateChange, waitStep } from './vm-state.js';
import type { VmState } from '@pvc/zk';
import { migrateWaitStep, planMigration, type MigrateFacts, type MigratePlan } from './vm-migrate.js';
import type { VmStatus } from './vm-status.js';

const status = (state: VmState | '', node = 'hv1', runningOn: string[] = [], failedReason = ''): VmStatus => ({ state, node, lastNode: '', failedReason, runningOn });

describe('planStateChange', () => {
  it('guards of §5.5', () => {
    assert.deepEqual(planStateChange('x', 'stop', 'start', false), { kind: 'write', state: 'start' });
    assert.equal(planStateChange('x', 'mirror', 'stop', false).kind, 'refuse');
    assert.deepEqual(planStateChange('x', 'mirror', 'stop', true), { kind: 'write', state: 'stop' });
    assert.deepEqual(planStateChange('x', 'stop', 'restart', false), { kind: 'refuse', why: 'cannot restart VM "x": it is stop, not start' });
    assert.deepEqual(planStateChange('x', 'start', 'disable', false), { kind: 'disable', first: 'shutdown' });
    assert.deepEqual(planStateChange('x', 'start', 'disable', true), { kind: 'disable', first: 'stop' });
    assert.deepEqual(planStateChange('x', 'shutdown', 'disable', false), { kind: 'disable', first: null });
    assert.equal(planStateChange('x', 'migrate', 'disable', false).kind, 'refuse');
    assert.deepEqual(planStateChange('x', 'fail', 'disable', false), { kind: 'write', state: 'disable' });
  });

  it('wait steps', () => {
    assert.equal(waitStep('start', status('start', 'hv1', ['hv1'])).done, true);
    assert.equal(waitStep('start', status('start', 'hv1', ['hv2'])).done, false);
    assert.equal(waitStep('start', status('fail', 'hv1', [], 'boom')).failed, 'boom');
    assert.equal(waitStep('stop', status('stop', 'hv1', ['hv1'])).done, false);
    assert.equal(waitStep('shutdown', status('start')).failed, 'its state changed to start');
    assert.equal(waitStep('restart', status('restart', 'hv1', ['hv1'])).done, false);
  });
});

describe('planMigration', () => {
  const vm: MigrateFacts = { name: 'x', state: 'start', node: 'hv1', lastNode: '' };
  it('writes the keys vmd expects', () => {
    assert.deepEqual(planMigration(vm, 'migrate', 'hv2', {}), { state: 'migrate', node: 'hv2', lastNode: 'hv1', live: true });
    assert.deepEqual(planMigration(vm, 'migrate', 'hv2', { forceLive: true }), { state: 'migrate-live', node: 'hv2', lastNode: 'hv1', live: true });
    assert.deepEqual(planMigration({ ...vm, state: 'stop' }, 'move', 'hv2', {}), { state: 'stop', node: 'hv2', lastNode: '', live: false });
    assert.deepEqual(planMigration({ ...vm, node: 'hv2', lastNode: 'hv1' }, 'migrate', 'hv3', { force: true }), { state: 'migrate', node: 'hv3', lastNode: 'hv1', live: true });
    assert.throws(() => planMigration({ ...vm, node: 'hv2', lastNode: 'hv1' }, 'migrate', 'hv3', {}), /already migrated \(from hv1\)/);
  });

  it('refuses a VM whose state is empty or unreadable (nothing to keep)', () => {
    assert.throws(() => planMigration({ ...vm, state: '' }, 'move', 'hv2', {}), /its state is empty or unreadable/);
  });

  it('wait: an abort back to the source is a failure with its reason', () => {
    const p: MigratePlan = { state: 'migrate', node: 'hv2', lastNode: 'hv1', live: true };
    assert.equal(migrateWaitStep(p, status('migrate', 'hv2', ['hv1'])).done, false);
    assert.equal(migrateWaitStep(p, status('start', 'hv2', ['hv2'])).done, true);
    assert.equal(migrateWaitStep(p, status('start', 'hv1', ['hv1'], 'Migration to hv2 failed: x')).failed, 'Migration to hv2 failed: x');
  });
});
