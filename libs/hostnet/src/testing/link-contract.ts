import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { realClock } from '@pvc/runtime';
import { LinkError, type LinkErrorCode, type LinkPort, type LinkState } from '../link-port.js';

/** What the contract suite needs from one {@link LinkPort} implementation: a fresh host per test. */
export interface LinkContractHarness {
  readonly port: LinkPort;
  /** Makes an Ethernet device `name` (down, MTU 1500) whose segment is shared with other hosts. */
  addDevice(name: string): Promise<void>;
  /** Another host on the segment of `device` holds `cidr` (and answers ARP for it). */
  addPeer(device: string, cidr: string): Promise<void>;
  close(): Promise<void>;
}

async function rejectsWith(p: Promise<unknown>, reason: LinkErrorCode, detail?: RegExp): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof LinkError, `expected a LinkError, got ${String(err)}`);
    assert.equal(err.reason, reason, err.message);
    if (detail) assert.match(err.detail, detail);
    return true;
  });
}

/** Polls the port until `name` has carrier (bounded: a bridge takes about a second). */
async function carrierOf(port: LinkPort, name: string, timeoutMs = 5_000): Promise<boolean> {
  const deadline = realClock.now() + timeoutMs;
  for (;;) {
    if ((await port.links()).find((l) => l.name === name)?.carrier === true) return true;
    if (realClock.now() >= deadline) return false;
    await realClock.sleep(50);
  }
}

/**
 * Registers the LinkPort contract: one set of tests written against the interface only, which the
 * fake (unit tier) and the `ip`/`arping` adapter in a network namespace (integration tier, root)
 * must both pass. Each test gets a fresh harness from `make`.
 */
export function registerLinkContract(name: string, make: () => Promise<LinkContractHarness>): void {
  describe(`LinkPort contract: ${name}`, () => {
    let h: LinkContractHarness;
    const link = async (n: string): Promise<LinkState | undefined> => (await h.port.links()).find((l) => l.name === n);
    beforeEach(async () => {
      h = await make();
    });
    afterEach(async () => {
      await h.close();
    });

    test('links: a device with its MTU and state; a missing one is absent', async () => {
      await h.addDevice('pvct0');
      const l = await link('pvct0');
      assert.equal(l?.mtu, 1500);
      assert.equal(l?.up, false);
      assert.equal(l?.carrier, false);
      assert.equal(l?.master, undefined);
      assert.equal(await link('pvcnope0'), undefined);
    });

    test('add-bridge: a bridge, down; a second of the same name is EXISTS', async () => {
      await h.port.apply({ kind: 'add-bridge', bridge: 'brt0' });
      const b = await link('brt0');
      assert.equal(b?.kind, 'bridge');
      assert.equal(b?.up, false);
      await rejectsWith(h.port.apply({ kind: 'add-bridge', bridge: 'brt0' }), 'EXISTS');
    });

    test('set-master: the device becomes a port; a missing device is NO_DEVICE; into a non-bridge is REFUSED', async () => {
      await h.addDevice('pvct0');
      await h.addDevice('pvct1');
      await h.port.apply({ kind: 'add-bridge', bridge: 'brt0' });
      await h.port.apply({ kind: 'set-master', device: 'pvct0', bridge: 'brt0' });
      assert.equal((await link('pvct0'))?.master, 'brt0');
      await rejectsWith(h.port.apply({ kind: 'set-master', device: 'pvcnope0', bridge: 'brt0' }), 'NO_DEVICE', /pvcnope0/);
      await rejectsWith(h.port.apply({ kind: 'set-master', device: 'pvct1', bridge: 'pvct0' }), 'REFUSED');
    });

    test('set-mtu and set-up; an MTU above the device maximum is MTU_REFUSED and changes nothing', async () => {
      await h.addDevice('pvct0');
      await h.port.apply({ kind: 'set-mtu', device: 'pvct0', mtu: 9000 });
      await h.port.apply({ kind: 'set-up', device: 'pvct0' });
      assert.deepEqual([(await link('pvct0'))?.mtu, (await link('pvct0'))?.up], [9000, true]);
      await rejectsWith(h.port.apply({ kind: 'set-mtu', device: 'pvct0', mtu: 70000 }), 'MTU_REFUSED', /maximum/);
      assert.equal((await link('pvct0'))?.mtu, 9000);
      await rejectsWith(h.port.apply({ kind: 'set-mtu', device: 'pvcnope0', mtu: 1500 }), 'NO_DEVICE');
      await rejectsWith(h.port.apply({ kind: 'set-up', device: 'pvcnope0' }), 'NO_DEVICE');
    });

    test('add-address: listed (IPv4 only); the same again is EXISTS; on a missing device NO_DEVICE', async () => {
      await h.addDevice('pvct0');
      await h.port.apply({ kind: 'set-up', device: 'pvct0' });
      await h.port.apply({ kind: 'add-address', device: 'pvct0', cidr: '10.77.0.2/24' });
      await h.port.apply({ kind: 'add-address', device: 'pvct0', cidr: '10.76.0.2/16' });
      const mine = (await h.port.addresses()).filter((a) => a.device === 'pvct0');
      assert.deepEqual(mine, [{ device: 'pvct0', ip: '10.77.0.2', prefix: 24 }, { device: 'pvct0', ip: '10.76.0.2', prefix: 16 }]);
      await rejectsWith(h.port.apply({ kind: 'add-address', device: 'pvct0', cidr: '10.77.0.2/24' }), 'EXISTS');
      await rejectsWith(h.port.apply({ kind: 'add-address', device: 'pvcnope0', cidr: '10.77.0.3/24' }), 'NO_DEVICE');
    });

    test('replace-default-route: via a connected gateway, again without error; a gateway outside every network is REFUSED', async () => {
      await h.addDevice('pvct0');
      await h.port.apply({ kind: 'set-up', device: 'pvct0' });
      await h.port.apply({ kind: 'add-address', device: 'pvct0', cidr: '10.78.0.2/24' });
      assert.deepEqual(await h.port.defaultRoutes(), []);
      await h.port.apply({ kind: 'replace-default-route', gateway: '10.78.0.1', device: 'pvct0' });
      await h.port.apply({ kind: 'replace-default-route', gateway: '10.78.0.1', device: 'pvct0' });
      const routes = await h.port.defaultRoutes();
      assert.deepEqual(routes.map((r) => [r.gateway, r.device]), [['10.78.0.1', 'pvct0']]);
      await rejectsWith(h.port.apply({ kind: 'replace-default-route', gateway: '10.79.0.1', device: 'pvct0' }), 'REFUSED', /gateway/);
    });

    test('carrier: a device once up (its other end is up); a bridge with ports once one forwards (a bridge without ports has it at once)', async () => {
      await h.addDevice('pvct0');
      await h.port.apply({ kind: 'add-bridge', bridge: 'brt0' });
      await h.port.apply({ kind: 'set-master', device: 'pvct0', bridge: 'brt0' });
      await h.port.apply({ kind: 'set-up', device: 'brt0' });
      assert.equal((await link('brt0'))?.carrier, false, 'no carrier while its only port is down');
      await h.port.apply({ kind: 'set-up', device: 'pvct0' });
      assert.equal(await carrierOf(h.port, 'pvct0'), true, 'the device has carrier within 5 s');
      assert.equal(await carrierOf(h.port, 'brt0'), true, 'the bridge has carrier within 5 s');
      await h.port.apply({ kind: 'add-bridge', bridge: 'brt1' });
      await h.port.apply({ kind: 'set-up', device: 'brt1' });
      assert.equal((await link('brt1'))?.carrier, true, 'an up bridge without ports has carrier');
    });

    test('probeAddress: through a bridge, a peer\'s address is in use (with its MAC), another is free; from a down link PROBE_FAILED', async () => {
      await h.addDevice('pvct0');
      await h.addPeer('pvct0', '10.77.0.5/24');
      await h.port.apply({ kind: 'add-bridge', bridge: 'brt0' });
      await rejectsWith(h.port.probeAddress('brt0', '10.77.0.5'), 'PROBE_FAILED', /down/);
      await h.port.apply({ kind: 'set-master', device: 'pvct0', bridge: 'brt0' });
      await h.port.apply({ kind: 'set-up', device: 'pvct0' });
      await h.port.apply({ kind: 'set-up', device: 'brt0' });
      assert.equal(await carrierOf(h.port, 'brt0'), true, 'the bridge has carrier within 5 s');
      const [taken, free] = await Promise.all([h.port.probeAddress('brt0', '10.77.0.5'), h.port.probeAddress('brt0', '10.77.0.6')]);
      assert.equal(taken.inUse, true);
      assert.match((taken.inUse && taken.by) || '', /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/);
      assert.deepEqual(free, { inUse: false });
    });
  });
}
