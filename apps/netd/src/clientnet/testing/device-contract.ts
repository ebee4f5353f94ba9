/**
 * The behaviour every {@link ClientDevicePort} has, driven through {@link convergeClientNetworks}:
 * run against the fake (unit tier, `fake-devices.spec.ts`, with and without VLAN support) and the
 * real adapter in a network namespace (integration tier, `tests/integration/netd/clientnet.test.ts`).
 *
 * @module
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { convergeClientNetworks, type ConvergeResult } from '../converge.js';
import type { ClientDevicePort } from '../device-port.js';
import { OWNER_ALIAS, vniOfDevice, type ClientNetwork, type NodeFacts, type ObservedDevices, type ObservedLink } from '../model.js';

/**
 * What a contract run needs: a port; node facts whose cluster and bridge devices exist, are up and
 * have MTU 1500 (`clusterMtu` and `bridgeMtu` 1500), with own address 192.0.2.1; whether the host
 * makes 802.1Q VLANs; and a way to add a bridge netd did not make.
 */
export interface DeviceRig {
  port: ClientDevicePort;
  facts: NodeFacts;
  vlans: boolean;
  addForeignBridge(name: string): Promise<void>;
  teardown(): Promise<void>;
}

const errCode = (err: unknown): unknown => (err instanceof Error && 'code' in err ? err.code : undefined);
const link = (o: ObservedDevices, name: string): ObservedLink | undefined => o.links.find((l) => l.name === name);
const clientLinks = (o: ObservedDevices): string[] => o.links.map((l) => l.name).filter((n) => vniOfDevice(n) !== undefined).sort();
const managed = (vni: number, mtu: number | null = null): ClientNetwork => ({ vni, type: 'managed', mtu });
const bridged = (vni: number, mtu: number | null = null): ClientNetwork => ({ vni, type: 'bridged', mtu });

/** The failures of a pass as `vni code`, for one-line assertions. */
const failures = (r: ConvergeResult): string[] => r.failed.map((f) => `${f.vni} ${f.error.code}`);

export function deviceContract(name: string, setup: () => Promise<DeviceRig>): void {
  describe(`ClientDevicePort contract: ${name}`, () => {
    let rig: DeviceRig;
    let facts: NodeFacts;
    const pass = (nets: ClientNetwork[], f: Partial<NodeFacts> = {}): Promise<ConvergeResult> => convergeClientNetworks(rig.port, nets, { ...facts, ...f });
    before(async () => {
      rig = await setup();
      facts = { ...rig.facts, clusterAddress: '192.0.2.1', peers: ['192.0.2.1', '192.0.2.2', '192.0.2.3'] };
    });
    after(async () => {
      await rig?.teardown();
    });

    it('observe on a fresh host: the cluster device with its MTU, no client network device', async () => {
      const o = await rig.port.observe();
      assert.equal(link(o, facts.clusterDevice)?.mtu, 1500);
      assert.deepEqual(clientLinks(o), []);
    });

    it('managed networks converge: VXLAN in vmbr, MTU ≤ cluster − 50, up, flooding to the other nodes; then nothing to do', async () => {
      const r = await pass([managed(100), managed(101, 9000)]);
      assert.deepEqual(failures(r), []);
      const o = await rig.port.observe();
      for (const vni of [100, 101]) {
        assert.deepEqual({ ...link(o, `vxlan${vni}`), index: 0 }, {
          name: `vxlan${vni}`, index: 0, kind: 'vxlan', mtu: 1450, up: true, master: `vmbr${vni}`, alias: OWNER_ALIAS, id: vni, dstport: 4789, lower: facts.clusterDevice,
        });
        const br = link(o, `vmbr${vni}`);
        assert.deepEqual([br?.kind, br?.mtu, br?.up, br?.alias], ['bridge', 1450, true, OWNER_ALIAS]);
        assert.deepEqual([...(o.flood.get(`vxlan${vni}`) ?? [])].sort(), ['192.0.2.2', '192.0.2.3']);
        if (o.ipv6) assert.equal(o.ipv6.get(`vmbr${vni}`)?.accept_dad, '0');
      }
      assert.deepEqual((await pass([managed(100), managed(101, 9000)])).applied, []);
    });

    it('nodes join and leave: the flooding entries follow, nothing else changes', async () => {
      const before = await rig.port.observe();
      const r = await pass([managed(100), managed(101, 9000)], { peers: ['192.0.2.3', '192.0.2.4'] });
      assert.deepEqual(failures(r), []);
      assert.deepEqual(new Set(r.applied.map((a) => a.kind)), new Set(['flood-add', 'flood-del']));
      const o = await rig.port.observe();
      for (const vni of [100, 101]) assert.deepEqual([...(o.flood.get(`vxlan${vni}`) ?? [])].sort(), ['192.0.2.3', '192.0.2.4']);
      assert.equal(link(o, 'vxlan100')?.index, link(before, 'vxlan100')?.index);
      assert.deepEqual((await pass([managed(100), managed(101, 9000)], { peers: ['192.0.2.3', '192.0.2.4'] })).applied, []);
    });

    it('an MTU change applies live to both devices (same devices, new MTU)', async () => {
      const before = await rig.port.observe();
      assert.deepEqual(failures(await pass([managed(100), managed(101, 1400)])), []);
      const o = await rig.port.observe();
      for (const dev of ['vxlan101', 'vmbr101']) {
        assert.equal(link(o, dev)?.mtu, 1400, dev);
        assert.equal(link(o, dev)?.index, link(before, dev)?.index, `${dev} was not recreated`);
      }
      assert.deepEqual(failures(await pass([managed(100), managed(101)])), []);
      assert.equal(link(await rig.port.observe(), 'vmbr101')?.mtu, 1450);
    });

    it('a bridged network: a VLAN in vmbr at most bridge_mtu, or (no VLANs here) a clear error while the others converge', async () => {
      const nets = [managed(100), bridged(200, 9000), managed(102)];
      const r = await pass(nets);
      const o = await rig.port.observe();
      assert.deepEqual([link(o, 'vxlan102')?.master, link(o, 'vmbr102')?.up], ['vmbr102', true], 'the managed network of the same pass converged');
      if (rig.vlans) {
        assert.deepEqual(failures(r), []);
        const v = link(o, 'vlan200');
        assert.deepEqual([v?.kind, v?.id, v?.lower, v?.mtu, v?.master], ['vlan', 200, facts.bridgeDevice, 1500, 'vmbr200']);
        if (o.ipv6) assert.equal(o.ipv6.get('vmbr200')?.disable_ipv6, '1');
      } else {
        assert.deepEqual(failures(r), ['200 CLIENTNET_UNSUPPORTED']);
        assert.match(r.failed[0]!.error.message, /client network 200: cannot create vlan200 \(802\.1Q VLAN 200 on .+\): this kernel has no support/);
        assert.equal(link(o, 'vlan200'), undefined);
        const again = await pass(nets);
        assert.deepEqual([failures(again), again.applied.filter((a) => a.vni !== 200)], [['200 CLIENTNET_UNSUPPORTED'], []]);
      }
    });

    it('a bridge netd did not make is used for its network, and left in place when the network goes', async () => {
      await rig.addForeignBridge('vmbr103');
      const r = await pass([managed(100), managed(103)]);
      assert.deepEqual(failures(r), []);
      assert.ok(!r.applied.some((a) => a.kind === 'create-bridge'));
      const o = await rig.port.observe();
      assert.deepEqual([link(o, 'vxlan103')?.master, link(o, 'vmbr103')?.alias], ['vmbr103', undefined]);
    });

    it('removal deletes every device netd made and nothing else', async () => {
      assert.deepEqual(failures(await pass([])), []);
      const o = await rig.port.observe();
      assert.deepEqual(clientLinks(o), ['vmbr103']);
      assert.ok(link(o, facts.clusterDevice) && (facts.bridgeDevice === undefined || link(o, facts.bridgeDevice)));
      assert.deepEqual((await pass([])).applied, []);
    });

    it('errors name the network and the device; deleting what is gone is done', async () => {
      const cases: [Parameters<ClientDevicePort['apply']>[0], string, RegExp][] = [
        [{ kind: 'set-mtu', vni: 999, device: 'vmbr999', mtu: 1400 }, 'CLIENTNET_NO_DEVICE', /client network 999: .*vmbr999/],
        [{ kind: 'create-vxlan', vni: 998, device: 'vxlan998', lower: 'nosuch0', mtu: 1400 }, 'CLIENTNET_NO_DEVICE', /client network 998: .*nosuch0/],
      ];
      for (const [a, code, msg] of cases) {
        await assert.rejects(rig.port.apply(a), (err: unknown) => {
          assert.equal(errCode(err), code);
          assert.match((err as Error).message, msg);
          return true;
        });
      }
      await rig.port.apply({ kind: 'create-vxlan', vni: 997, device: 'vxlan997', lower: facts.clusterDevice, mtu: 1450 });
      await assert.rejects(rig.port.apply({ kind: 'set-mtu', vni: 997, device: 'vxlan997', mtu: 1500 }), (err: unknown) => errCode(err) === 'CLIENTNET_MTU_REFUSED');
      await rig.port.apply({ kind: 'delete', vni: 997, device: 'vxlan997', why: 'test' });
      await rig.port.apply({ kind: 'delete', vni: 997, device: 'vxlan997', why: 'test' });
      await rig.port.apply({ kind: 'flood-del', vni: 997, device: 'vxlan997', dst: '192.0.2.9' });
      assert.deepEqual(clientLinks(await rig.port.observe()), ['vmbr103']);
    });
  });
}
