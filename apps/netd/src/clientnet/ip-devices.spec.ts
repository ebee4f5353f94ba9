// The real adapter's parsing, commands and error mapping against canned `ip`/`bridge`/`sysctl`
// output (the same adapter runs for real in tests/integration/netd/clientnet*.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeExec } from '@pvc/runtime';
import { createIpDevices } from './ip-devices.js';
import { OWNER_ALIAS } from './model.js';

const LINKS = [
  { ifindex: 2, ifname: 'ens4', mtu: 1500, flags: ['UP'], linkinfo: { info_kind: 'veth' }, link: 'ens4p' },
  { ifindex: 5, ifname: 'vxlan100', mtu: 1450, flags: ['UP', 'LOWER_UP'], master: 'vmbr100', ifalias: OWNER_ALIAS, linkinfo: { info_kind: 'vxlan', info_data: { id: 100, port: 4789, link: 'ens4' } } },
  { ifindex: 6, ifname: 'vmbr100', mtu: 1450, flags: ['BROADCAST'], ifalias: OWNER_ALIAS, linkinfo: { info_kind: 'bridge' } },
  { ifindex: 7, ifname: 'vlan200', mtu: 9000, flags: [], link: 'ens5', linkinfo: { info_kind: 'vlan', info_data: { protocol: '802.1Q', id: 200 } } },
];
const FDB = [
  { mac: '0a:00:00:00:00:01', ifname: 'vxlan100', flags: [], master: 'vmbr100' },
  { mac: '00:00:00:00:00:00', ifname: 'vxlan100', dst: '10.0.0.2', flags: ['self'] },
  { mac: '00:00:00:00:00:00', ifname: 'vxlan100', dst: '10.0.0.3', flags: ['self'] },
  { mac: '33:33:00:00:00:01', ifname: 'ens4', flags: ['self'] },
];

test('observe: links with VXLAN/VLAN details and alias, the all-zeros entries, the bridges\' IPv6 settings', async () => {
  const exec = new FakeExec()
    .on('ip netns exec n1 ip -json -d link show', { stdout: JSON.stringify(LINKS) })
    .on('ip netns exec n1 bridge -json fdb show', { stdout: JSON.stringify(FDB) })
    .on('ip netns exec n1 sysctl -r', { stdout: 'net.ipv6.conf.vmbr100.accept_dad = 0\nnet.ipv6.conf.vmbr100.disable_ipv6 = 0\n' });
  const o = await createIpDevices({ exec, prefix: ['ip', 'netns', 'exec', 'n1'] }).observe();
  assert.deepEqual(o.links.map((l) => [l.name, l.index, l.kind, l.mtu, l.up, l.master, l.alias, l.id, l.dstport, l.lower]), [
    ['ens4', 2, 'veth', 1500, true, undefined, undefined, undefined, undefined, undefined],
    ['vxlan100', 5, 'vxlan', 1450, true, 'vmbr100', OWNER_ALIAS, 100, 4789, 'ens4'],
    ['vmbr100', 6, 'bridge', 1450, false, undefined, OWNER_ALIAS, undefined, undefined, undefined],
    ['vlan200', 7, 'vlan', 9000, false, undefined, undefined, 200, undefined, 'ens5'],
  ]);
  assert.deepEqual([...o.flood], [['vxlan100', ['10.0.0.2', '10.0.0.3']]]);
  assert.deepEqual([...(o.ipv6 ?? [])], [['vmbr100', { accept_dad: '0', disable_ipv6: '0' }]]);
});

test('observe: no VXLAN → no fdb read; no IPv6 on the host → ipv6 undefined', async () => {
  const exec = new FakeExec()
    .on('ip -json -d link show', { stdout: JSON.stringify(LINKS.slice(0, 1)) })
    .on('sysctl -r', { exitCode: 255, stderr: 'sysctl: cannot stat /proc/sys/net/ipv6/conf: No such file or directory\n' });
  const o = await createIpDevices({ exec }).observe();
  assert.equal(o.ipv6, undefined);
  assert.ok(!exec.lines().some((l) => l.startsWith('bridge')));
});

test('create: add with MTU, then the alias; a device that cannot be marked is deleted again', async () => {
  const exec = new FakeExec().on('ip link', {});
  await createIpDevices({ exec }).apply({ kind: 'create-vxlan', vni: 100, device: 'vxlan100', lower: 'ens4', mtu: 1450 });
  assert.deepEqual(exec.lines(), [
    'ip link add vxlan100 mtu 1450 type vxlan id 100 dstport 4789 dev ens4',
    `ip link set dev vxlan100 alias ${OWNER_ALIAS}`,
  ]);
  const bad = new FakeExec().on('ip link', {}).on('ip link set dev vmbr100 alias', { exitCode: 2, stderr: 'RTNETLINK answers: Operation not permitted\n' });
  await assert.rejects(createIpDevices({ exec: bad }).apply({ kind: 'create-bridge', vni: 100, device: 'vmbr100', mtu: 1450 }), /client network 100: .*vmbr100.*not permitted/);
  assert.equal(bad.lines().at(-1), 'ip link del dev vmbr100');
});

test('errors: no VLAN support → UNSUPPORTED naming network and device; missing devices; gone is done', async () => {
  const exec = new FakeExec()
    .on('ip link add link ens5 name vlan200', { exitCode: 2, stderr: 'Error: Unknown device type.\n' })
    .on('ip link set dev vmbr9', { exitCode: 1, stderr: 'Cannot find device "vmbr9"\n' })
    .on('ip link del dev vmbr9', { exitCode: 1, stderr: 'Cannot find device "vmbr9"\n' })
    .on('bridge fdb del', { exitCode: 255, stderr: 'Cannot find device "vxlan9"\n' })
    .on('sysctl -w', { exitCode: 255, stderr: 'sysctl: permission denied on key "net.ipv6.conf.vmbr9.accept_dad"\n' });
  const port = createIpDevices({ exec });
  await assert.rejects(port.apply({ kind: 'create-vlan', vni: 200, device: 'vlan200', lower: 'ens5', mtu: 9000 }), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'CLIENTNET_UNSUPPORTED');
    assert.equal(err.message, 'client network 200: cannot create vlan200 (802.1Q VLAN 200 on ens5): this kernel has no support for that device type (ip: Error: Unknown device type.)');
    return true;
  });
  await assert.rejects(port.apply({ kind: 'set-up', vni: 9, device: 'vmbr9' }), { code: 'CLIENTNET_NO_DEVICE' });
  await assert.rejects(port.apply({ kind: 'set-ipv6', vni: 9, device: 'vmbr9', key: 'accept_dad', value: '0' }), { code: 'CLIENTNET_REFUSED' });
  await port.apply({ kind: 'delete', vni: 9, device: 'vmbr9', why: 'test' });
  await port.apply({ kind: 'flood-del', vni: 9, device: 'vxlan9', dst: '10.0.0.2' });
  await assert.rejects(createIpDevices({ exec: new FakeExec() }).observe(), { code: 'CLIENTNET_UNAVAILABLE' });
});
