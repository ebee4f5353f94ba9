import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { paths } from '@pvc/zk';
import { FakeZkStats } from '@pvc/zk/testing';
import { unitRig } from './testing.js';

const MINE = '11111111-0000-0000-0000-000000000001';
const OTHER = '22222222-0000-0000-0000-000000000002';

describe('DesiredStore scope: only the VMs that concern this node are followed in detail', () => {
  it('state changes of a VM assigned elsewhere and not running here notify this vmd of nothing', async () => {
    const rig = await unitRig();
    await rig.define(MINE, 'vm1', 'start');
    await rig.define(OTHER, 'vm2', 'start', 'hv2');
    await rig.startVmd();
    await rig.settle();
    assert.equal(rig.hv.isRunning(MINE), true);
    const before = rig.server.stats.snapshot();
    for (const state of ['stop', 'start', 'shutdown', 'start']) await rig.admin.write([[paths.domain(OTHER).state, state]]);
    await rig.settle();
    const other = FakeZkStats.diff(before, rig.server.stats.snapshot());
    assert.equal(other.notifications, 0, 'another node\'s VM: no watch on its state');
    const before2 = rig.server.stats.snapshot();
    for (const state of ['stop', 'start']) {
      await rig.admin.write([[paths.domain(MINE).state, state]]);
      await rig.settle();
    }
    const mine = FakeZkStats.diff(before2, rig.server.stats.snapshot());
    assert.ok(mine.notifications >= 2, `own VM's state is watched (${mine.notifications} notifications)`);
    assert.equal(rig.hv.creates.get(MINE), 2, 'stopped and started again');
    await rig.stop();
  });

  it('a VM moved here in start is started; once moved away and stopped it is no longer followed', async () => {
    const rig = await unitRig();
    await rig.define(OTHER, 'vm2', 'stop', 'hv2');
    await rig.startVmd();
    await rig.settle();
    // One transaction, as a recovery or `pvc vm move` of a stopped VM writes it.
    await rig.admin.write([[paths.domain(OTHER).node, 'hv1'], [paths.domain(OTHER).state, 'start']]);
    await rig.settle();
    assert.equal(rig.hv.isRunning(OTHER), true, 'started after its node key named this node');
    await rig.admin.write([[paths.domain(OTHER).state, 'stop']]);
    await rig.settle();
    assert.equal(rig.hv.isRunning(OTHER), false);
    await rig.admin.write([[paths.domain(OTHER).node, 'hv2']]);
    await rig.settle();
    const before = rig.server.stats.snapshot();
    // One change may still fire a watch armed before the move (ZK watches are one-shot and cannot
    // be withdrawn); the ones after it find none.
    for (const state of ['start', 'stop', 'start', 'stop']) await rig.admin.write([[paths.domain(OTHER).state, state]]);
    await rig.settle();
    const after = FakeZkStats.diff(before, rig.server.stats.snapshot());
    assert.ok(after.notifications <= 1, `no longer followed (${after.notifications} notifications)`);
    assert.equal(rig.hv.isRunning(OTHER), false);
    await rig.stop();
  });

  it('a domain running here that ZK assigns elsewhere is followed while it runs (a shutdown is done here)', async () => {
    const rig = await unitRig({ acpiShutdownMs: 500 });
    await rig.define(OTHER, 'vm2', 'shutdown', 'hv2');
    rig.hv.addRunning(OTHER, 'vm2');
    await rig.startVmd();
    await rig.settle();
    assert.equal(rig.hv.isRunning(OTHER), false);
    assert.deepEqual(rig.hv.shutdowns, [OTHER], 'graceful shutdown here (its state read), not a destroy');
    assert.deepEqual(rig.hv.destroys, []);
    await rig.stop();
  });
});
