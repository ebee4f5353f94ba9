import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock, createLogger, flushMicrotasks } from '@pvc/runtime';
import { newNetworkObject, nodeKeys, paths, readKeyIfExists, readKeyWithStat, type ZkClient } from '@pvc/zk';
import { FakeZkServer } from '@pvc/zk/testing';
import { FakeDevices } from './fake-devices.js';
import { ClientNetworkFollower, firewallSpec, type OwnFacts } from './follower.js';
import { NetworksUpPublisher } from './networks-up.js';

const own: OwnFacts = {
  facts: { clusterDevice: 'brcluster', clusterMtu: 9000, clusterAddress: '10.0.0.1' },
  peerAddress: (node) => (/^hv(\d+)$/.test(node) ? `10.0.0.${node.slice(2)}` : undefined),
};

async function rig() {
  const clock = new VirtualClock(1_700_000_000_000);
  const server = new FakeZkServer({ clock });
  const admin = await server.connect();
  for (const p of [paths.nodes, paths.networks]) await admin.ensurePath(p);
  for (const n of ['hv1', 'hv2', 'hv3']) await admin.ensurePath(`${paths.nodes}/${n}`);
  const devices = new FakeDevices();
  devices.addLink('brcluster', { kind: 'bridge', mtu: 9000 });
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ service: 'netd', node: 'hv1', debug: true, dates: false, destination: { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) } });
  const zk = await server.connect();
  const networksUp = new NetworksUpPublisher({ zk, node: 'hv1', logger });
  const follower = new ClientNetworkFollower({ zk, devices, clock, logger, node: 'hv1', own, resyncMs: 5_000, networksUp });
  const ac = new AbortController();
  follower.start(ac.signal);
  const settle = async (ms = 100): Promise<void> => {
    await clock.advance(ms);
    await flushMicrotasks();
  };
  const addNetwork = async (z: ZkClient, vni: number, extra: Partial<Parameters<typeof newNetworkObject>[0]> = {}): Promise<void> => {
    const o = newNetworkObject({ vni, description: `net${vni}`, type: 'managed', ip4Network: '10.100.0.0/24', ip4Gateway: '10.100.0.1', ...extra });
    await z.createObject(o.root, o.entries);
  };
  const stop = async (): Promise<void> => {
    ac.abort();
    await follower.stop();
    await zk.close();
    await admin.close();
  };
  return { clock, admin, devices, follower, lines, settle, addNetwork, stop };
}

describe('ClientNetworkFollower (fake ZK, fake devices, virtual time)', () => {
  it('a network added in ZK gets vxlan<vni> in vmbr<vni> with one flooding entry per other node; removal tears both down', async () => {
    const r = await rig();
    await r.settle();
    await r.addNetwork(r.admin, 100);
    await r.settle();
    assert.ok(r.devices.links.has('vmbr100') && r.devices.links.has('vxlan100'));
    assert.equal(r.devices.links.get('vxlan100')!.mtu, 8950);
    assert.deepEqual(r.devices.flood.get('vxlan100'), ['10.0.0.2', '10.0.0.3']);
    await r.admin.ensurePath(`${paths.nodes}/hv4`);
    await r.settle();
    assert.deepEqual(r.devices.flood.get('vxlan100'), ['10.0.0.2', '10.0.0.3', '10.0.0.4'], 'a node that joins becomes a peer');
    await r.admin.delete(paths.network(100).root);
    await r.settle();
    assert.ok(!r.devices.links.has('vmbr100') && !r.devices.links.has('vxlan100'));
    await r.stop();
  });

  it('an MTU change applies at once; a malformed network is logged with its key and skipped, the others converge', async () => {
    const r = await rig();
    await r.addNetwork(r.admin, 100);
    await r.addNetwork(r.admin, 200, { ip4Network: '10.200.0.0/24', ip4Gateway: '10.200.0.1' });
    await r.settle();
    await r.admin.write([[paths.network(100).mtu, '1400']]);
    await r.settle();
    assert.equal(r.devices.links.get('vxlan100')!.mtu, 1400);
    assert.equal(r.devices.links.get('vmbr100')!.mtu, 1400);
    await r.admin.write([[paths.network(200).ip4Gateway, '10.99.0.1']]);
    await r.settle(5_000); // the gateway key is not watched: the resync finds it
    const bad = r.lines.filter((l) => l.msg === 'client network data in Zookeeper is not usable');
    assert.equal(bad.length, 1, 'logged once');
    assert.equal(bad[0]!.vni, '200');
    assert.match(String(bad[0]!.key), /networks\/200/);
    assert.ok(r.devices.links.has('vmbr100'), 'the good network stays');
    assert.ok(!r.devices.links.has('vmbr200'), 'the malformed one is not (any more) set up');
    await r.settle(10_000);
    assert.equal(r.lines.filter((l) => l.msg === 'client network data in Zookeeper is not usable').length, 1, 'not logged again at every pass');
    await r.stop();
  });

  it('a failing change is logged once and retried by the resync', async () => {
    const r = await rig();
    r.devices.knobs.refuseDevice = 'vxlan100';
    await r.addNetwork(r.admin, 100);
    await r.settle();
    assert.ok(!r.devices.links.has('vxlan100'));
    await r.settle(11_000);
    assert.equal(r.lines.filter((l) => l.msg === 'client network change failed; retried at the next pass').length, 1);
    r.devices.knobs.refuseDevice = undefined;
    await r.settle(5_000);
    assert.ok(r.devices.links.has('vxlan100') && r.devices.links.has('vmbr100'));
    await r.stop();
  });

  it('networks_up: the vmbr<vni> bridges up after each pass (an admin\'s too), written only when they change', async () => {
    const r = await rig();
    const key = nodeKeys('hv1').networksUp;
    await r.settle();
    assert.deepEqual(await readKeyIfExists(r.admin, key), [], 'no bridge: an empty list (known), not absent');
    await r.addNetwork(r.admin, 1100);
    await r.settle();
    assert.deepEqual(await readKeyIfExists(r.admin, key), [1100]);
    r.devices.addLink('vmbr7', { kind: 'bridge' });
    r.devices.addLink('vmbr8', { kind: 'bridge', up: false });
    r.devices.addLink('vmbr09', { kind: 'bridge' });
    await r.settle(5_000);
    assert.deepEqual(await readKeyIfExists(r.admin, key), [7, 1100], 'an admin\'s bridge counts when up; vmbr09 is no VNI');
    const before = (await readKeyWithStat(r.admin, key))!.stat.version;
    await r.settle(10_000);
    assert.equal((await readKeyWithStat(r.admin, key))!.stat.version, before, 'resync passes without a change write nothing');
    await r.admin.delete(paths.network(1100).root);
    await r.settle();
    assert.deepEqual(await readKeyIfExists(r.admin, key), [7]);
    await r.stop();
  });

  it('networks_up: a failed write is logged once and retried by the next passes', async () => {
    const r = await rig();
    await r.admin.delete(paths.node('hv1').root); // not registered (yet): every write fails with NO_NODE
    await r.addNetwork(r.admin, 1100);
    await r.settle();
    await r.settle(5_000);
    await r.settle(5_000);
    assert.ok(r.follower.passes >= 3);
    assert.equal(await readKeyIfExists(r.admin, nodeKeys('hv1').networksUp), undefined);
    const failed = r.lines.filter((l) => String(l.msg).startsWith('cannot write the client network bridges up'));
    assert.equal(failed.length, 1, 'logged once');
    assert.match(String(failed[0]!.err), /NO_NODE/);
    await r.admin.ensurePath(paths.node('hv1').root);
    await r.settle(5_000);
    assert.deepEqual(await readKeyIfExists(r.admin, nodeKeys('hv1').networksUp), [1100], 'written by the next pass');
    await r.stop();
  });

  it('firewallSpec: a family without network or gateway is null; ACLs pass through', () => {
    const spec = firewallSpec({
      vni: 7, description: 'n', type: 'managed', mtu: null, domain: 'n.local', nameServers: [],
      ip4: { network: '10.7.0.0/24', gateway: '10.7.0.1', dhcp: false, dhcpStart: null, dhcpEnd: null },
      ip6: { network: null, gateway: null, dhcp: false },
      reservations: [], leases: [],
      acls: { in: [{ direction: 'in', name: 'a', rule: 'tcp dport 22 accept', order: 0 }], out: [] },
    });
    assert.deepEqual(spec.ip4, { network: '10.7.0.0/24', gateway: '10.7.0.1' });
    assert.equal(spec.ip6, null);
    assert.equal(spec.acls.in[0]!.name, 'a');
  });
});
