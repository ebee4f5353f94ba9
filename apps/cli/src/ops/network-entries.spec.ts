import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { firewallRuleKeys, leaseKeys, readClientNetworks, type ZkClient } from '@pvc/zk';
import { fails, fakeCluster } from '../testing/fake-cluster.js';
import { addAcl, removeAcl } from './network-acl.js';
import { addNetwork } from './network-change.js';
import { addReservation, removeDhcpEntry } from './network-dhcp.js';

async function withNetworks(): Promise<{ zk: ZkClient; dump: (root?: string) => Record<string, string> }> {
  const c = await fakeCluster();
  await addNetwork(c.zk, '100', { description: 'clients', type: 'managed', ipnet: '10.100.0.0/24', gateway: '10.100.0.1' });
  await addNetwork(c.zk, '200', { description: 'vlan200', type: 'bridged' });
  return c;
}

const orders = (dump: Record<string, string>, dir: 'in' | 'out'): Record<string, string> => Object.fromEntries(
  Object.entries(dump).filter(([k]) => k.startsWith(`/networks/100/firewall_rules/${dir}/`) && k.endsWith('/order'))
    .map(([k, v]) => [k.split('/')[5] ?? '', v]),
);

describe('network acl', () => {
  it('add: root "", rule text, order int-str; inserting renumbers the chain 0..n−1', async () => {
    const { zk, dump } = await withNetworks();
    await addAcl(zk, '100', { description: 'ssh', rule: 'tcp dport 22 accept', direction: 'in' });
    await addAcl(zk, '100', { description: 'web', rule: 'tcp dport 80 accept', direction: 'in' });
    await addAcl(zk, 'clients', { description: 'dns', rule: 'udp dport 53 accept', direction: 'in', order: '1' });
    await addAcl(zk, '100', { description: 'first', rule: 'icmp type echo-request accept', direction: 'in', order: '0' });
    await addAcl(zk, '100', { description: 'drop-out', rule: 'drop', direction: 'out', order: '99' });
    const d = dump();
    assert.equal(d['/networks/100/firewall_rules/in/ssh'], '');
    assert.equal(d['/networks/100/firewall_rules/in/ssh/rule'], 'tcp dport 22 accept');
    assert.deepEqual(orders(d, 'in'), { first: '0', ssh: '1', dns: '2', web: '3' });
    assert.deepEqual(orders(d, 'out'), { 'drop-out': '0' });
  });

  it('remove renumbers the rest in the same transaction; a stored "10" sorts after "2"', async () => {
    const { zk, dump } = await withNetworks();
    for (const [name, order] of [['a', '2'], ['b', '10'], ['c', '0']] as const) {
      const k = firewallRuleKeys(100, 'in', name);
      await zk.write([[k.root.path, ''], [k.rule.path, 'accept'], [k.order.path, order]]);
    }
    const r = await removeAcl(zk, '100', 'c');
    assert.equal(r.acl.direction, 'in');
    assert.deepEqual(orders(dump(), 'in'), { a: '0', b: '1' });
    await addAcl(zk, '100', { description: 'z', rule: 'drop', direction: 'in' });
    assert.deepEqual(orders(dump(), 'in'), { a: '0', b: '1', z: '2' });
  });

  it('guards: unique name across directions, name form, order form, bridged networks, unknown ACL', async () => {
    const { zk, dump } = await withNetworks();
    await addAcl(zk, '100', { description: 'ssh', rule: 'tcp dport 22 accept', direction: 'in' });
    const before = dump();
    await fails(addAcl(zk, '100', { description: 'ssh', rule: 'drop', direction: 'out' }), 1, /already has an ACL "ssh" \(in\)/);
    await fails(addAcl(zk, '100', { description: 'two words', rule: 'drop', direction: 'in' }), 2, /must not be empty or contain blanks/);
    await fails(addAcl(zk, '100', { description: 'x', rule: ' ', direction: 'in' }), 2, /--rule must not be empty/);
    await fails(addAcl(zk, '100', { description: 'x', rule: 'drop', direction: 'in', order: '-1' }), 2, /--order "-1" is not a position/);
    await fails(addAcl(zk, '200', { description: 'x', rule: 'drop', direction: 'in' }), 1, /bridged: only managed networks have a firewall/);
    await fails(removeAcl(zk, '100', 'nope'), 1, /network 100 has no ACL "nope" \(ACLs: ssh\)/);
    assert.deepEqual(dump(), before);
  });
});

describe('network dhcp', () => {
  it('add: root "static", lower-case MAC, ipaddr and hostname', async () => {
    const { zk, dump } = await withNetworks();
    const r = await addReservation(zk, '100', '10.100.0.10', 'web1', '52:54:00:AA:BB:01');
    assert.equal(r.mac, '52:54:00:aa:bb:01');
    assert.deepEqual(dump('/networks/100/dhcp4_reservations'), {
      '/networks/100/dhcp4_reservations': '',
      '/networks/100/dhcp4_reservations/52:54:00:aa:bb:01': 'static',
      '/networks/100/dhcp4_reservations/52:54:00:aa:bb:01/hostname': 'web1',
      '/networks/100/dhcp4_reservations/52:54:00:aa:bb:01/ipaddr': '10.100.0.10',
    });
  });

  it('guards: MAC form, IPv4 inside the network, no duplicate MAC or address, managed networks only', async () => {
    const { zk, dump } = await withNetworks();
    await addReservation(zk, '100', '10.100.0.10', 'web1', '52:54:00:aa:bb:01');
    const before = dump();
    await fails(addReservation(zk, '100', '10.100.0.11', 'x', '52-54-00-aa-bb-02'), 2, /MAC address "52-54-00-aa-bb-02" is not valid/);
    await fails(addReservation(zk, '100', '10.100.0.300', 'x', '52:54:00:aa:bb:02'), 2, /"10\.100\.0\.300" is not an IPv4 address/);
    await fails(addReservation(zk, '100', '10.101.0.5', 'x', '52:54:00:aa:bb:02'), 2, /10\.101\.0\.5 is not inside network 100's 10\.100\.0\.0\/24/);
    await fails(addReservation(zk, '100', '10.100.0.11', 'x', '52:54:00:AA:BB:01'), 1, /reservation for MAC 52:54:00:aa:bb:01 already exists/);
    await fails(addReservation(zk, '100', '10.100.0.10', 'x', '52:54:00:aa:bb:02'), 1, /10\.100\.0\.10 is already reserved for 52:54:00:aa:bb:01 \(web1\)/);
    await fails(addReservation(zk, '200', '10.100.0.12', 'x', '52:54:00:aa:bb:03'), 1, /bridged: only managed networks have DHCP/);
    assert.deepEqual(dump(), before);
  });

  it('remove: by MAC (any case), address or hostname; reservations first, then leases', async () => {
    const { zk, dump } = await withNetworks();
    await addReservation(zk, '100', '10.100.0.10', 'web1', '52:54:00:aa:bb:01');
    await addReservation(zk, '100', '10.100.0.11', 'web2', '52:54:00:aa:bb:02');
    const l = leaseKeys(100, '52:54:00:aa:bb:09');
    await zk.write([[l.root.path, ''], [l.expiry.path, '1700003600'], [l.ipaddr.path, '10.100.0.150'], [l.hostname.path, 'guest'], [l.clientId.path, '*']]);
    assert.deepEqual(await removeDhcpEntry(zk, '100', '52:54:00:AA:BB:01').then((r) => [r.kind, r.mac]), ['reservation', '52:54:00:aa:bb:01']);
    assert.deepEqual(await removeDhcpEntry(zk, '100', 'web2').then((r) => [r.kind, r.mac]), ['reservation', '52:54:00:aa:bb:02']);
    assert.deepEqual(await removeDhcpEntry(zk, '100', '10.100.0.150').then((r) => [r.kind, r.mac]), ['lease', '52:54:00:aa:bb:09']);
    await fails(removeDhcpEntry(zk, '100', 'web1'), 1, /no DHCP reservation or lease matching "web1"/);
    assert.deepEqual(dump('/networks/100/dhcp4_reservations'), { '/networks/100/dhcp4_reservations': '' });
    assert.deepEqual(dump('/networks/100/dhcp4_leases'), { '/networks/100/dhcp4_leases': '' });
    const n = (await readClientNetworks(zk)).networks[0];
    assert.deepEqual([n?.reservations, n?.leases], [[], []]);
  });
});
