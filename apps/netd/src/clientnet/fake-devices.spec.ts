import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { convergeClientNetworks } from './converge.js';
import { FakeDevices } from './fake-devices.js';
import type { ClientNetwork, NodeFacts } from './model.js';
import { deviceContract } from './testing/device-contract.js';

const FACTS: NodeFacts = { clusterDevice: 'c0', clusterMtu: 1500, bridgeDevice: 'b0', bridgeMtu: 1500, clusterAddress: '192.0.2.1', peers: ['192.0.2.2'] };

function host(vlans = true): FakeDevices {
  const port = new FakeDevices();
  port.knobs.vlans = vlans;
  port.addLink('c0', { kind: 'veth' });
  port.addLink('b0', { kind: 'veth' });
  return port;
}

for (const vlans of [true, false]) {
  deviceContract(`fake, ${vlans ? 'with' : 'without'} 802.1Q VLANs`, () => {
    const port = host(vlans);
    return Promise.resolve({
      port,
      facts: FACTS,
      vlans,
      addForeignBridge: (name: string) => Promise.resolve(port.addLink(name, { kind: 'bridge' })),
      teardown: () => Promise.resolve(),
    });
  });
}

const NETS: ClientNetwork[] = [{ vni: 100, type: 'managed', mtu: null }, { vni: 101, type: 'managed', mtu: null }];

describe('convergeClientNetworks(): failures', () => {
  it('a refused change stops the rest of its network only; the next pass finishes it without repeating', async () => {
    const port = host();
    port.knobs.refuseDevice = 'vmbr100';
    const r = await convergeClientNetworks(port, NETS, FACTS);
    assert.deepEqual(r.failed.map((f) => [f.vni, f.error.code, f.action.kind]), [[100, 'CLIENTNET_REFUSED', 'create-bridge']]);
    assert.match(r.failed[0]!.error.message, /client network 100: .*vmbr100/);
    assert.deepEqual([...new Set(r.skipped.map((a) => a.vni))], [100]);
    assert.ok(r.applied.some((a) => a.device === 'vmbr101'));
    port.knobs = {};
    const again = await convergeClientNetworks(port, NETS, FACTS);
    assert.deepEqual(again.failed, []);
    assert.deepEqual(again.applied.map((a) => `${a.kind} ${a.device}`), ['create-bridge vmbr100', 'set-master vxlan100', 'set-up vxlan100', 'set-up vmbr100', 'set-ipv6 vmbr100', 'flood-add vxlan100']);
  });

  it('a failed flooding entry is retried by the next pass', async () => {
    const port = host();
    port.knobs.failKind = { kind: 'flood-add', times: 1 };
    const r = await convergeClientNetworks(port, NETS.slice(0, 1), FACTS);
    assert.deepEqual(r.failed.map((f) => f.action.kind), ['flood-add']);
    const again = await convergeClientNetworks(port, NETS.slice(0, 1), FACTS);
    assert.deepEqual(again.applied.map((a) => a.kind), ['flood-add']);
    assert.deepEqual(port.flood.get('vxlan100'), ['192.0.2.2']);
  });

  it('the host cannot be observed: the pass rejects and changes nothing', async () => {
    const port = host();
    port.knobs.down = true;
    await assert.rejects(convergeClientNetworks(port, NETS, FACTS), /not available/);
    assert.deepEqual(port.applied, []);
  });

  it('problems are reported, the other networks converge', async () => {
    const port = host();
    const r = await convergeClientNetworks(port, [...NETS, { vni: 200, type: 'bridged', mtu: null }], { ...FACTS, bridgeDevice: undefined });
    assert.deepEqual(r.problems.map((p) => [p.vni, p.reason]), [[200, 'no-bridge-device']]);
    assert.deepEqual(r.failed, []);
    assert.ok(port.links.has('vmbr100') && port.links.has('vmbr101'));
  });

  it('an aborted pass stops between changes', async () => {
    const port = host();
    const ac = new AbortController();
    const r = await convergeClientNetworks(port, NETS, FACTS, { signal: ac.signal, onAction: () => ac.abort() });
    assert.equal(r.applied.length, 1);
    assert.ok(r.skipped.length > 0);
  });
});
