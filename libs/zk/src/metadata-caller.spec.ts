import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { VirtualClock } from '@pvc/runtime';
import { lookupCaller } from './metadata-caller.js';
import { leaseKeys, reservationKeys } from './networks.js';
import { newDomainObject, newNetworkObject, type NewNetworkInput } from './objects.js';
import { baseKeys, paths } from './schema.js';
import { FakeZkServer } from './testing/index.js';
import type { ZkClient } from './types.js';

const UUID_A = 'aaaaaaaa-0000-4000-8000-000000000001';
const UUID_B = 'bbbbbbbb-0000-4000-8000-000000000002';

const managed = (vni: number): NewNetworkInput => ({
  vni, description: `net${vni}`, type: 'managed', ip4Network: `10.${vni % 250}.0.0/24`, ip4Gateway: `10.${vni % 250}.0.1`,
  dhcp4: true, dhcp4Start: `10.${vni % 250}.0.100`, dhcp4End: `10.${vni % 250}.0.199`,
});

const xml = (name: string, ...nics: [mac: string, bridge: string][]): string =>
  `<domain type='kvm'><name>${name}</name><memory unit='MiB'>512</memory><vcpu>1</vcpu><devices>` +
  nics.map(([mac, bridge]) => `<interface type='bridge'><mac address='${mac}'/><source bridge='${bridge}'/><model type='virtio'/></interface>`).join('') +
  `</devices></domain>`;

async function world(): Promise<ZkClient> {
  const server = new FakeZkServer({ clock: new VirtualClock(1_700_000_000_000) });
  const zk = await server.connect();
  for (const k of baseKeys()) await zk.ensurePath(k);
  for (const n of [managed(100), managed(101), { vni: 200, description: 'vlan200', type: 'bridged' as const }]) {
    const o = newNetworkObject(n);
    await zk.createObject(o.root, o.entries);
  }
  await vm(zk, UUID_A, 'web1', 'cloud', xml('web1', ['52:54:00:00:00:0a', 'vmbr100'], ['52:54:00:00:01:0a', 'vmbr101']));
  await vm(zk, UUID_B, 'db1', null, xml('db1', ['52:54:00:00:00:0b', 'vmbr100']));
  await lease(zk, 100, '52:54:00:00:00:0a', '10.100.0.150');
  await lease(zk, 100, '52:54:00:00:00:0b', '10.100.0.151');
  return zk;
}

async function vm(zk: ZkClient, uuid: string, name: string, profile: string | null, x: string): Promise<void> {
  const d = newDomainObject({ uuid, name, node: 'hv1', xml: x, profile });
  await zk.createObject(d.root, d.entries);
}

async function lease(zk: ZkClient, vni: number, mac: string, ip: string): Promise<void> {
  const l = leaseKeys(vni, mac);
  await zk.write([[l.root.path, ''], [l.expiry.path, '1700003600'], [l.ipaddr.path, ip], [l.hostname.path, 'guest'], [l.clientId.path, '*']]);
}

async function reservation(zk: ZkClient, vni: number, mac: string, ip: string): Promise<void> {
  const r = reservationKeys(vni, mac);
  await zk.write([[r.root.path, 'static'], [r.ipaddr.path, ip], [r.hostname.path, 'fixed']]);
}

describe('lookupCaller', () => {
  it('source address → lease → MAC → the VM with that NIC: uuid, name, profile (None → null)', async () => {
    const zk = await world();
    assert.deepEqual(await lookupCaller(zk, '10.100.0.150'), {
      result: { kind: 'found', vm: { uuid: UUID_A, name: 'web1', profile: 'cloud' }, mac: '52:54:00:00:00:0a', vni: 100 }, problems: [],
    });
    const b = await lookupCaller(zk, '::ffff:10.100.0.151');
    assert.deepEqual(b.result, { kind: 'found', vm: { uuid: UUID_B, name: 'db1', profile: null }, mac: '52:54:00:00:00:0b', vni: 100 });
  });

  it('an address no lease or reservation holds, or not IPv4, is unknown', async () => {
    const zk = await world();
    assert.deepEqual((await lookupCaller(zk, '10.100.0.9')).result, { kind: 'unknown-address' });
    assert.deepEqual((await lookupCaller(zk, 'fd00::5')).result, { kind: 'unknown-address' });
  });

  it('a lease whose MAC is on no VM: no-vm (never another VM)', async () => {
    const zk = await world();
    await lease(zk, 101, '52:54:00:00:00:ff', '10.101.0.160');
    assert.deepEqual((await lookupCaller(zk, '10.101.0.160')).result, { kind: 'no-vm', mac: '52:54:00:00:00:ff' });
  });

  it('a static reservation counts (the guest set its reserved address itself); the VM is found through its second NIC', async () => {
    const zk = await world();
    await reservation(zk, 101, '52:54:00:00:01:0a', '10.101.0.20');
    assert.deepEqual((await lookupCaller(zk, '10.101.0.20')).result, { kind: 'found', vm: { uuid: UUID_A, name: 'web1', profile: 'cloud' }, mac: '52:54:00:00:01:0a', vni: 101 });
  });

  it('leases on bridged networks are not looked at (managed networks only, as the original)', async () => {
    const zk = await world();
    await zk.ensurePath(paths.network(200).root + '/dhcp4_leases');
    await lease(zk, 200, '52:54:00:00:00:0b', '10.200.0.5');
    assert.deepEqual((await lookupCaller(zk, '10.200.0.5')).result, { kind: 'unknown-address' });
  });

  it('refused when the address leads to two MACs (two networks, or a lease and a reservation that disagree), or the MAC to two VMs', async () => {
    const zk = await world();
    await lease(zk, 101, '52:54:00:00:01:0a', '10.100.0.151');
    const two = await lookupCaller(zk, '10.100.0.151');
    assert.equal(two.result.kind, 'ambiguous');
    assert.match((two.result as { why: string }).why, /dhcp4_leases\/52:54:00:00:00:0b.*dhcp4_leases\/52:54:00:00:01:0a/);

    await reservation(zk, 100, '52:54:00:00:00:0c', '10.100.0.150');
    assert.equal((await lookupCaller(zk, '10.100.0.150')).result.kind, 'ambiguous');

    await reservation(zk, 100, '52:54:00:00:00:0a', '10.100.0.150'); // agrees with the lease: still the 0c one disagrees
    const uuidC = 'cccccccc-0000-4000-8000-000000000003';
    await lease(zk, 100, '52:54:00:00:00:0d', '10.100.0.170');
    await vm(zk, uuidC, 'clone1', null, xml('clone1', ['52:54:00:00:00:0d', 'vmbr100']));
    await vm(zk, 'dddddddd-0000-4000-8000-000000000004', 'clone2', null, xml('clone2', ['52:54:00:00:00:0d', 'vmbr100']));
    const dup = await lookupCaller(zk, '10.100.0.170');
    assert.deepEqual(dup.result, { kind: 'ambiguous', why: `MAC 52:54:00:00:00:0d is on the NICs of VMs ${uuidC}, dddddddd-0000-4000-8000-000000000004` });
  });

  it('a lease and a reservation naming the same MAC agree', async () => {
    const zk = await world();
    await reservation(zk, 100, '52:54:00:00:00:0a', '10.100.0.150');
    assert.equal((await lookupCaller(zk, '10.100.0.150')).result.kind, 'found');
  });

  it('bad data: a malformed lease, a lease under a non-MAC name, a network with a bad type, a domain whose XML does not parse → skipped, reported by key', async () => {
    const zk = await world();
    await lease(zk, 100, '52:54:00:00:00:0e', 'not-an-ip');
    await zk.ensurePath(`${paths.network(100).root}/dhcp4_leases/garbage`);
    await zk.write([[paths.network(101).type, 'weird']]);
    await zk.write([[paths.domain(UUID_B).xml, '<domain type="kvm"><devices><interface type="bridge"><mac address="52:54:00:00:00:0b"/>']]);
    const r = await lookupCaller(zk, '10.100.0.151');
    assert.deepEqual(r.result, { kind: 'no-vm', mac: '52:54:00:00:00:0b' }, 'the broken domain is not guessed at');
    assert.deepEqual(r.problems.map((p) => [p.key, p.effect]).sort(), [
      ['/domains/bbbbbbbb-0000-4000-8000-000000000002/xml', 'domain skipped'],
      ['/networks/100/dhcp4_leases/52:54:00:00:00:0e/ipaddr', 'entry skipped'],
      ['/networks/100/dhcp4_leases/garbage', 'entry skipped'],
      ['/networks/101/nettype', 'network skipped'],
    ]);
    assert.equal((await lookupCaller(zk, '10.100.0.150')).result.kind, 'found', 'the good VM is still found');
  });

  it('no /networks or /domains at all: unknown', async () => {
    const server = new FakeZkServer({ clock: new VirtualClock(0) });
    const zk = await server.connect();
    assert.deepEqual(await lookupCaller(zk, '10.0.0.1'), { result: { kind: 'unknown-address' }, problems: [] });
  });
});
