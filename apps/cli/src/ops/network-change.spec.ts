import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { paths, readClientNetworks } from '@pvc/zk';
import { fails, fakeCluster } from '../testing/fake-cluster.js';
import { addNetwork, modifyNetwork, removeNetwork, type NetworkOptions } from './network-change.js';

const MANAGED: NetworkOptions = {
  description: 'clients', type: 'managed', ipnet: '10.100.0.0/24', gateway: '10.100.0.1', dhcp: true, dhcpStart: '10.100.0.100', dhcpEnd: '10.100.0.199',
};

describe('network add', () => {
  it("writes exactly the original's keys and encodings, in one object", async () => {
    const { zk, dump } = await fakeCluster();
    await addNetwork(zk, '100', { ...MANAGED, dnsServer: ['10.0.0.1', '10.0.0.2'], ipnet6: 'fd00:100::/64' });
    assert.deepEqual(dump(), {
      '/networks': '',
      '/networks/100': 'clients',
      '/networks/100/nettype': 'managed',
      '/networks/100/mtu': '',
      '/networks/100/domain': 'clients.local',
      '/networks/100/name_servers': '10.0.0.1,10.0.0.2',
      '/networks/100/ip4_network': '10.100.0.0/24',
      '/networks/100/ip4_gateway': '10.100.0.1',
      '/networks/100/ip6_network': 'fd00:100::/64',
      '/networks/100/ip6_gateway': 'fd00:100::1',
      '/networks/100/dhcp4_flag': 'True',
      '/networks/100/dhcp6_flag': 'True',
      '/networks/100/dhcp4_start': '10.100.0.100',
      '/networks/100/dhcp4_end': '10.100.0.199',
      '/networks/100/dhcp4_reservations': '',
      '/networks/100/dhcp4_leases': '',
      '/networks/100/firewall_rules': '',
      '/networks/100/firewall_rules/in': '',
      '/networks/100/firewall_rules/out': '',
    });
  });

  it('a bridged network: no domain, addresses None, flags False, an MTU as digits', async () => {
    const { zk, dump } = await fakeCluster();
    await addNetwork(zk, '200', { description: 'vlan200', type: 'bridged', mtu: '1500' });
    const d = dump();
    assert.equal(d['/networks/200/domain'], '');
    assert.equal(d['/networks/200/mtu'], '1500');
    assert.equal(d['/networks/200/ip4_network'], 'None');
    assert.equal(d['/networks/200/ip6_gateway'], 'None');
    assert.equal(d['/networks/200/dhcp4_flag'], 'False');
    assert.equal(d['/networks/200/dhcp6_flag'], 'False');
  });

  it("refuses what the original refuses, and what the nodes would fail on; nothing written", async () => {
    const { zk, dump } = await fakeCluster();
    await addNetwork(zk, '100', MANAGED);
    const before = dump();
    const cases: [string, NetworkOptions, number, RegExp][] = [
      ['0', MANAGED, 2, /VNI 0 is out of range/],
      ['16777216', MANAGED, 2, /out of range: 1–16777215/],
      ['x1', MANAGED, 2, /VNI "x1" is not a number/],
      ['5000', { description: 'v', type: 'bridged' }, 2, /VLAN, 1–4094/],
      ['101', { ...MANAGED, description: 'has blank' }, 2, /description "has blank" must not/],
      ['101', { ...MANAGED, ipnet: '10.101.0.1/24' }, 2, /--ipnet: "10\.101\.0\.1\/24" has host bits set/],
      ['101', { ...MANAGED, ipnet: '10.101.0.0/24', gateway: '10.100.0.1' }, 2, /--gateway: gateway 10\.100\.0\.1 is not a host address inside 10\.101\.0\.0\/24/],
      ['101', { ...MANAGED, ipnet: '10.101.0.0/24', gateway: undefined }, 2, /needs --gateway/],
      ['101', { ...MANAGED, ipnet: '10.101.0.0/24', gateway: '10.101.0.1', dhcpStart: undefined }, 2, /DHCPv4 start and end addresses are required/],
      ['101', { ...MANAGED, ipnet: '10.101.0.0/24', gateway: '10.101.0.1', dhcpEnd: '10.102.0.5' }, 2, /DHCP start 10\.100\.0\.100 is not a host address inside 10\.101\.0\.0\/24/],
      ['101', { ...MANAGED, ipnet: '10.101.0.0/24', gateway: '10.101.0.1', dhcpStart: '10.101.0.9', dhcpEnd: '10.101.0.5' }, 2, /after the end/],
      ['101', { ...MANAGED, ipnet6: 'fd00::/64', gateway6: 'fd01::1' }, 2, /--gateway6: gateway fd01::1 is not a host address inside fd00::\/64/],
      ['101', { ...MANAGED, mtu: '40' }, 2, /--mtu "40" is not an MTU/],
      ['201', { description: 'v', type: 'bridged', ipnet: '10.1.0.0/24' }, 2, /--ipnet apply to managed networks only/],
      ['100', { ...MANAGED, description: 'other' }, 1, /a network with VNI 100 already exists/],
      ['101', { ...MANAGED }, 1, /a network with description "clients" already exists \(VNI 100\)/],
    ];
    for (const [vni, o, exit, re] of cases) await fails(addNetwork(zk, vni, o), exit, re);
    assert.deepEqual(dump(), before);
  });
});

describe('network modify', () => {
  it('writes only the changed keys; "" clears; the IPv6 gateway follows a new network', async () => {
    const { zk, dump } = await fakeCluster();
    await addNetwork(zk, '100', { ...MANAGED, ipnet6: 'fd00:100::/64' });
    const r = await modifyNetwork(zk, 'clients', { mtu: '1400', ipnet6: 'fd00:200::/64', dnsServer: ['10.0.0.53'] });
    assert.deepEqual(r.changes, [
      { key: 'mtu', value: '1400' }, { key: 'name_servers', value: '10.0.0.53' },
      { key: 'ip6_network', value: 'fd00:200::/64' }, { key: 'ip6_gateway', value: 'fd00:200::1' },
    ]);
    await modifyNetwork(zk, '100', { ipnet6: '', mtu: '', description: 'renamed', dhcp: false });
    const d = dump();
    assert.equal(d['/networks/100'], 'renamed');
    assert.equal(d['/networks/100/mtu'], '');
    assert.equal(d['/networks/100/ip6_network'], 'None');
    assert.equal(d['/networks/100/ip6_gateway'], 'None');
    assert.equal(d['/networks/100/dhcp6_flag'], 'False');
    assert.equal(d['/networks/100/dhcp4_flag'], 'False');
    assert.equal(d['/networks/100/domain'], 'clients.local', 'untouched');
    const same = await modifyNetwork(zk, '100', { mtu: '' });
    assert.deepEqual(same.changes, []);
  });

  it('checks the merged result and the new description; nothing written when refused', async () => {
    const { zk, dump } = await fakeCluster();
    await addNetwork(zk, '100', MANAGED);
    await addNetwork(zk, '101', { ...MANAGED, description: 'other', ipnet: '10.101.0.0/24', gateway: '10.101.0.1', dhcp: false, dhcpStart: undefined, dhcpEnd: undefined });
    const before = dump();
    await fails(modifyNetwork(zk, '100', {}), 2, /give at least one of/);
    await fails(modifyNetwork(zk, '100', { ipnet: '10.200.0.0/24' }), 2, /needs --gateway/);
    await fails(modifyNetwork(zk, '100', { ipnet: '' }), 2, /--dhcp needs an IPv4 network/);
    await fails(modifyNetwork(zk, '100', { dhcpEnd: '10.100.1.1' }), 2, /DHCP end 10\.100\.1\.1 is not a host address/);
    await fails(modifyNetwork(zk, '100', { description: 'other' }), 1, /already exists \(VNI 101\)/);
    await fails(modifyNetwork(zk, '999', { mtu: '1400' }), 1, /no network with VNI or description "999" \(networks: 100 \(clients\), 101 \(other\)\)/);
    assert.deepEqual(dump(), before);
    await modifyNetwork(zk, '100', { ipnet: '10.200.0.0/24', gateway: '10.200.0.1', dhcpStart: '10.200.0.10', dhcpEnd: '10.200.0.20' });
    const n = (await readClientNetworks(zk)).networks.find((x) => x.vni === 100);
    assert.deepEqual(n?.ip4, { network: '10.200.0.0/24', gateway: '10.200.0.1', dhcp: true, dhcpStart: '10.200.0.10', dhcpEnd: '10.200.0.20' });
  });
});

describe('network remove', () => {
  it('deletes the network with everything under it; an unknown or bad network is refused', async () => {
    const { zk, dump } = await fakeCluster();
    await addNetwork(zk, '100', MANAGED);
    await zk.write([[`${paths.network(100).reservations}/52:54:00:00:00:01`, 'static']]);
    await zk.write([[paths.network('abc').root, 'junk']]);
    await fails(removeNetwork(zk, 'abc'), 1, /network abc has bad data in Zookeeper and is skipped: \/networks\/abc: VNI "abc" is not a number/);
    assert.equal((await removeNetwork(zk, 'clients')).vni, 100);
    assert.deepEqual(dump(), { '/networks': '', '/networks/abc': 'junk' });
    await fails(removeNetwork(zk, '100'), 1, /no network with VNI or description "100"/);
  });
});
