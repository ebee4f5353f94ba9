import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { VirtualClock } from '@pvc/runtime';
import { compareAcls, firewallRuleKeys, leaseKeys, readClientNetwork, readClientNetworks, reservationKeys } from './networks.js';
import { newNetworkObject, type NewNetworkInput } from './objects.js';
import { baseKeys, paths } from './schema.js';
import { FakeZkServer } from './testing/index.js';
import type { ZkClient } from './types.js';

async function world(): Promise<ZkClient> {
  const server = new FakeZkServer({ clock: new VirtualClock(1_700_000_000_000) });
  const zk = await server.connect();
  for (const k of baseKeys()) await zk.ensurePath(k);
  return zk;
}

const managed: NewNetworkInput = {
  vni: 100, description: 'clients', type: 'managed', ip4Network: '10.100.0.0/24', ip4Gateway: '10.100.0.1',
  dhcp4: true, dhcp4Start: '10.100.0.100', dhcp4End: '10.100.0.199', nameServers: ['10.0.0.1', '10.0.0.2'],
};

async function add(zk: ZkClient, input: NewNetworkInput): Promise<void> {
  const o = newNetworkObject(input);
  await zk.createObject(o.root, o.entries);
}

async function acl(zk: ZkClient, vni: number, dir: 'in' | 'out', name: string, rule: string, order: string): Promise<void> {
  const k = firewallRuleKeys(vni, dir, name);
  await zk.write([[k.root.path, ''], [k.rule.path, rule], [k.order.path, order]]);
}

describe('readClientNetworks', () => {
  it('reads every network with its reservations, leases and ACLs, typed', async () => {
    const zk = await world();
    await add(zk, managed);
    await add(zk, { vni: 200, description: 'vlan200', type: 'bridged', mtu: 1500 });
    await add(zk, { vni: 300, description: 'v6', type: 'managed', ip6Network: 'fd00:300::/64' });
    const r = reservationKeys(100, '52:54:00:00:00:01');
    await zk.write([[r.root.path, 'static'], [r.ipaddr.path, '10.100.0.10'], [r.hostname.path, 'web1']]);
    const l = leaseKeys(100, '52:54:00:00:00:02');
    await zk.write([[l.root.path, ''], [l.expiry.path, '1700003600'], [l.ipaddr.path, '10.100.0.150'], [l.hostname.path, 'guest'], [l.clientId.path, '*']]);
    await acl(zk, 100, 'in', 'ssh', 'tcp dport 22 accept', '2');
    await acl(zk, 100, 'in', 'web', 'tcp dport 80 accept', '10');
    await acl(zk, 100, 'in', 'dns', 'udp dport 53 accept', '2');
    await acl(zk, 100, 'out', 'drop-all', 'drop', '0');

    const t = await readClientNetworks(zk);
    assert.deepEqual(t.problems, []);
    assert.deepEqual(t.networks.map((n) => n.vni), [100, 200, 300]);
    const [n100, n200, n300] = t.networks;
    assert.deepEqual(n100, {
      vni: 100, description: 'clients', type: 'managed', mtu: null, domain: 'clients.local', nameServers: ['10.0.0.1', '10.0.0.2'],
      ip4: { network: '10.100.0.0/24', gateway: '10.100.0.1', dhcp: true, dhcpStart: '10.100.0.100', dhcpEnd: '10.100.0.199' },
      ip6: { network: null, gateway: null, dhcp: false },
      reservations: [{ mac: '52:54:00:00:00:01', ip: '10.100.0.10', hostname: 'web1' }],
      leases: [{ mac: '52:54:00:00:00:02', expiry: 1700003600, ip: '10.100.0.150', hostname: 'guest', clientId: '*' }],
      acls: {
        in: [
          { direction: 'in', name: 'dns', rule: 'udp dport 53 accept', order: 2 },
          { direction: 'in', name: 'ssh', rule: 'tcp dport 22 accept', order: 2 },
          { direction: 'in', name: 'web', rule: 'tcp dport 80 accept', order: 10 },
        ],
        out: [{ direction: 'out', name: 'drop-all', rule: 'drop', order: 0 }],
      },
    });
    assert.equal(n200?.type, 'bridged');
    assert.equal(n200?.mtu, 1500);
    assert.equal(n200?.domain, '');
    assert.deepEqual(n300?.ip6, { network: 'fd00:300::/64', gateway: 'fd00:300::1', dhcp: true });
  });

  it('ACL order is numeric ("10" after "2"), unreadable orders last, ties by name', () => {
    const names = [{ name: 'b', order: 10 }, { name: 'a', order: null }, { name: 'c', order: 2 }, { name: 'a2', order: 2 }].sort(compareAcls).map((a) => a.name);
    assert.deepEqual(names, ['a2', 'c', 'b', 'a']);
  });

  it('skips a network with a malformed VNI, type, CIDR or gateway, naming the key; the others are read', async () => {
    const zk = await world();
    await add(zk, managed);
    await add(zk, { ...managed, vni: 'abc', description: 'badvni' });
    await add(zk, { ...managed, vni: 101, description: 'badcidr', ip4Network: '10.101.0.0/33' });
    await add(zk, { ...managed, vni: 102, description: 'hostbits', ip4Network: '10.102.0.1/24', ip4Gateway: '10.102.0.2' });
    await add(zk, { ...managed, vni: 103, description: 'gwout', ip4Network: '10.103.0.0/24', ip4Gateway: '10.200.0.1' });
    await add(zk, { ...managed, vni: 104, description: 'badtype' });
    await zk.set(paths.network(104).type, 'routed');
    await add(zk, { vni: 5000, description: 'bigvlan', type: 'bridged' });
    await add(zk, { ...managed, vni: 105, description: 'gw6', ip6Network: 'fd00:105::/64', ip6Gateway: 'fd00:999::1' });

    const t = await readClientNetworks(zk);
    assert.deepEqual(t.networks.map((n) => n.vni), [100]);
    assert.deepEqual(t.problems.map((p) => [p.key, p.effect]).sort(), [
      ['/networks/101/ip4_network', 'network skipped'],
      ['/networks/102/ip4_network', 'network skipped'],
      ['/networks/103/ip4_gateway', 'network skipped'],
      ['/networks/104/nettype', 'network skipped'],
      ['/networks/105/ip6_gateway', 'network skipped'],
      ['/networks/5000', 'network skipped'],
      ['/networks/abc', 'network skipped'],
    ]);
    const byKey = new Map(t.problems.map((p) => [p.key, p.problem]));
    assert.match(byKey.get('/networks/abc') ?? '', /VNI "abc" is not a number/);
    assert.match(byKey.get('/networks/103/ip4_gateway') ?? '', /gateway 10\.200\.0\.1 is not a host address inside 10\.103\.0\.0\/24/);
    assert.match(byKey.get('/networks/104/nettype') ?? '', /"routed" is not one of managed\/bridged/);
  });

  it('other bad values: default used, entry skipped or DHCPv4 off — the network stays', async () => {
    const zk = await world();
    await add(zk, managed);
    await zk.set(paths.network(100).mtu, 'big');
    await zk.set(paths.network(100).dhcp4End, '10.100.1.5');
    const good = reservationKeys(100, '52:54:00:00:00:01');
    await zk.write([[good.root.path, 'static'], [good.ipaddr.path, '10.100.0.10'], [good.hostname.path, 'a']]);
    await zk.write([[reservationKeys(100, 'not-a-mac').root.path, 'static']]);
    const outside = reservationKeys(100, '52:54:00:00:00:03');
    await zk.write([[outside.root.path, 'static'], [outside.ipaddr.path, '10.9.9.9'], [outside.hostname.path, 'b']]);
    const l = leaseKeys(100, '52:54:00:00:00:04');
    await zk.write([[l.root.path, ''], [l.expiry.path, 'soon'], [l.ipaddr.path, '10.100.0.150']]);
    await acl(zk, 100, 'in', 'late', 'drop', 'first');
    await acl(zk, 100, 'in', 'early', 'accept', '0');

    const t = await readClientNetworks(zk);
    const n = t.networks[0];
    assert.ok(n);
    assert.equal(n.mtu, null);
    assert.equal(n.ip4.dhcp, false);
    assert.deepEqual(n.reservations.map((r) => r.mac), ['52:54:00:00:00:01']);
    assert.deepEqual(n.leases, []);
    assert.deepEqual(n.acls.in.map((a) => [a.name, a.order]), [['early', 0], ['late', null]]);
    assert.deepEqual(t.problems.map((p) => [p.key, p.effect]).sort(), [
      ['/networks/100/dhcp4_end', 'DHCPv4 off'],
      ['/networks/100/dhcp4_leases/52:54:00:00:00:04/expiry', 'entry skipped'],
      ['/networks/100/dhcp4_reservations/52:54:00:00:00:03/ipaddr', 'entry skipped'],
      ['/networks/100/dhcp4_reservations/not-a-mac', 'entry skipped'],
      ['/networks/100/firewall_rules/in/late/order', 'reported only'],
      ['/networks/100/mtu', 'default used'],
    ]);
  });

  it('reports a description used twice without skipping either network', async () => {
    const zk = await world();
    await add(zk, managed);
    await add(zk, { ...managed, vni: 101, ip4Network: '10.101.0.0/24', ip4Gateway: '10.101.0.1', dhcp4: false });
    const t = await readClientNetworks(zk);
    assert.equal(t.networks.length, 2);
    assert.deepEqual(t.problems.map((p) => [p.key, p.effect, p.problem]), [['/networks/101', 'reported only', 'description "clients" is also network 100\'s']]);
  });

  it('readClientNetwork: an absent network is undefined with no problem; no /networks is an empty tree', async () => {
    const zk = await world();
    assert.deepEqual(await readClientNetwork(zk, '100'), { problems: [] });
    await zk.delete(paths.networks);
    assert.deepEqual(await readClientNetworks(zk), { networks: [], problems: [] });
  });
});
