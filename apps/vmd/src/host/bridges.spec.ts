import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '@pvc/runtime';
import { paths } from '@pvc/zk';
import { unitRig } from '../testing.js';
import { BRIDGE_WAIT_MS, FakeBridges, describeBridge, waitForBridges } from './bridges.js';
import { bridgesContract } from './testing/bridges-contract.js';

bridgesContract('fake', () => Promise.resolve({ port: new FakeBridges(['vmbr100']), present: 'vmbr100', missing: 'vmbr4242', teardown: () => Promise.resolve() }));

const UUID = '5b000000-0000-0000-0000-000000000001';
const xmlWith = (...bridges: string[]): string =>
  `<domain type='qemu'><name>nic1</name><uuid>${UUID}</uuid><memory unit='MiB'>128</memory><vcpu>1</vcpu><devices>` +
  bridges.map((b) => `<interface type='bridge'><source bridge='${b}'/><model type='virtio'/></interface>`).join('') +
  `<interface type='network'><source network='default'/></interface></devices></domain>`;

describe('waitForBridges', () => {
  it('names a client network by its VNI, other bridges by name', () => {
    assert.equal(describeBridge('vmbr1000'), 'bridge vmbr1000 of network 1000');
    assert.equal(describeBridge('brupstream'), 'bridge brupstream');
  });

  it('resolves once a late bridge appears; rejects MISSING_BRIDGE naming the bridge, its network and the node after the bound', async () => {
    const clock = new VirtualClock(0);
    const port = new FakeBridges(['brcluster']);
    const late = waitForBridges(port, ['brcluster', 'vmbr100'], { clock, boundMs: 5_000, node: 'hv1' });
    await clock.advance(1_000);
    port.names.add('vmbr100');
    await clock.advance(300);
    await late;
    const never = waitForBridges(port, ['vmbr200'], { clock, boundMs: 5_000, node: 'hv1' });
    const settled = assert.rejects(never, (err: unknown) => {
      assert.equal((err as { code?: string }).code, 'MISSING_BRIDGE');
      assert.equal((err as Error).message, 'bridge vmbr200 of network 200 does not exist on hv1 after 5 s');
      return true;
    });
    await clock.advance(5_300);
    await settled;
  });

  it('a check that keeps failing ends as MISSING_BRIDGE with the last error', async () => {
    const clock = new VirtualClock(0);
    const port = new FakeBridges();
    port.down = true;
    const p = assert.rejects(waitForBridges(port, ['vmbr7'], { clock, boundMs: 1_000, node: 'hv1' }), /vmbr7 of network 7 does not exist on hv1 after 1 s \(last check failed: .*fake down/);
    await clock.advance(1_300);
    await p;
  });
});

describe('Reconciler: a VM whose bridge is missing (issue 12 item 5; fake libvirt, virtual time)', () => {
  it('waits for the bridge and starts the VM once it appears', async () => {
    const bridges = new FakeBridges();
    const rig = await unitRig({ bridges });
    await rig.startVmd();
    await rig.define(UUID, 'nic1', 'start', 'hv1', xmlWith('vmbr100'));
    await rig.settle(2_000);
    assert.equal(rig.hv.isRunning(UUID), false, 'not created while vmbr100 is missing');
    bridges.names.add('vmbr100');
    await rig.settle(1_000);
    assert.equal(rig.hv.isRunning(UUID), true);
    assert.equal(await rig.admin.read(paths.domain(UUID).state), 'start');
    await rig.stop();
  });

  it(`fails the VM naming the bridge and its network when it does not appear within ${BRIDGE_WAIT_MS / 1000} s; vmd goes on`, async () => {
    const bridges = new FakeBridges();
    const rig = await unitRig({ bridges });
    await rig.startVmd();
    await rig.define(UUID, 'nic1', 'start', 'hv1', xmlWith('vmbr100'));
    await rig.settle(BRIDGE_WAIT_MS + 1_000);
    assert.equal(rig.hv.creates.get(UUID) ?? 0, 0, 'never created');
    assert.equal(await rig.admin.read(paths.domain(UUID).state), 'fail');
    assert.equal(await rig.admin.read(paths.domain(UUID).failedReason), `bridge vmbr100 of network 100 does not exist on hv1 after ${BRIDGE_WAIT_MS / 1000} s`);
    // Another VM without that bridge still starts.
    const other = '5b000000-0000-0000-0000-000000000002';
    await rig.define(other, 'plain', 'start', 'hv1');
    await rig.settle(3_000);
    assert.equal(rig.hv.isRunning(other), true);
    await rig.stop();
  });
});
