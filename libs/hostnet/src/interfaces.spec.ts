import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '@pvc/config';
import { mutate } from '@pvc/config/testing';
import { dump } from 'js-yaml';
import { describeLinkOp, diffHostInterfaces, planHostInterfaces, type LinkState, type ObservedInterfaces } from './index.js';

const SYSNET = 'pvc.system.configuration.networking';
const configOf = (...edits: [string, unknown][]) => parseConfig(dump(mutate(...edits)), 'test.yaml');
/** Cluster on ens4, storage on ens5 (MTU 9000), upstream on ens6 with a static address; gateway 1.1.1.1. */
const SEPARATE: [string, unknown][] = [
  [`${SYSNET}.storage.device`, 'ens5'], [`${SYSNET}.storage.mtu`, 9000],
  [`${SYSNET}.upstream.device`, 'ens6'], [`${SYSNET}.upstream.address`, '1.1.1.5/24'],
];
const link = (name: string, o: Partial<LinkState> = {}): LinkState => ({ name, mtu: 1500, up: true, carrier: true, ...o });
const commands = (d: { changes: readonly { op: Parameters<typeof describeLinkOp>[0] }[] }) => d.changes.map((c) => describeLinkOp(c.op));

test('plan, the sample (all on ens4): one bridge with the cluster and storage addresses; upstream None means no default route, noted', () => {
  const p = planHostInterfaces(configOf());
  assert.deepEqual(p.bridges, [{
    bridge: 'brcluster', device: 'ens4', mtu: 1500, network: 'cluster',
    addresses: [
      { network: 'cluster', ip: '10.255.0.1', prefix: 24, cidr: '10.255.0.1/24' },
      { network: 'storage', ip: '10.254.0.1', prefix: 24, cidr: '10.254.0.1/24' },
    ],
  }]);
  assert.equal(p.route, undefined);
  assert.deepEqual(p.problems, []);
  assert.deepEqual(p.notes.map((n) => n.key), [`${SYSNET}.upstream.address`]);
  assert.match(p.notes[0]?.message ?? '', /no default route via 1\.1\.1\.1/);
});

test('plan, separate devices: three bridges with their MTUs, the default route on brupstream', () => {
  const p = planHostInterfaces(configOf(...SEPARATE));
  assert.deepEqual(p.bridges.map((b) => [b.bridge, b.device, b.mtu, b.addresses.map((a) => a.cidr)]), [
    ['brcluster', 'ens4', 1500, ['10.255.0.1/24']],
    ['brstorage', 'ens5', 9000, ['10.254.0.1/24']],
    ['brupstream', 'ens6', 1500, ['1.1.1.5/24']],
  ]);
  assert.deepEqual(p.route, { gateway: '1.1.1.1', bridge: 'brupstream' });
  assert.deepEqual([p.notes, p.problems], [[], []]);
});

test('plan: upstream sharing the storage device goes on brstorage; a differing MTU of a shared device is noted', () => {
  const p = planHostInterfaces(configOf(...SEPARATE, [`${SYSNET}.upstream.device`, 'ens5'], [`${SYSNET}.upstream.mtu`, 1500]));
  assert.deepEqual(p.bridges.map((b) => [b.bridge, b.device, b.addresses.map((a) => a.network)]), [
    ['brcluster', 'ens4', ['cluster']],
    ['brstorage', 'ens5', ['storage', 'upstream']],
  ]);
  assert.deepEqual(p.route, { gateway: '1.1.1.1', bridge: 'brstorage' });
  assert.deepEqual(p.notes.map((n) => n.key), [`${SYSNET}.upstream.mtu`]);
});

test('plan: a gateway outside every network with a node address is a problem at the gateway key; inside the cluster network it is routed there', () => {
  const bad = planHostInterfaces(configOf(...SEPARATE, ['pvc.cluster.networks.upstream.gateway', '9.9.9.9']));
  assert.equal(bad.route, undefined);
  assert.deepEqual(bad.problems, [{
    code: 'HOSTNET_GATEWAY_UNREACHABLE', key: 'pvc.cluster.networks.upstream.gateway',
    message: 'gateway 9.9.9.9 is not inside any network this node has an address on (cluster 10.255.0.1/24, storage 10.254.0.1/24, upstream 1.1.1.5/24)',
  }]);
  const viaCluster = planHostInterfaces(configOf(['pvc.cluster.networks.upstream.gateway', '10.255.0.250']));
  assert.deepEqual(viaCluster.route, { gateway: '10.255.0.250', bridge: 'brcluster' });
});

test('diff, a bare host: the device up, the bridge made, enslaved, its MTU set, up; both addresses; the device MTU already right', () => {
  const plan = planHostInterfaces(configOf());
  const d = diffHostInterfaces(plan, { links: [link('ens4', { up: false, carrier: false })], addresses: [], routes: [] });
  assert.deepEqual(commands(d), [
    'ip link set ens4 up',
    'ip link add brcluster type bridge stp_state 0 forward_delay 0',
    'ip link set ens4 master brcluster',
    'ip link set brcluster mtu 1500',
    'ip link set brcluster up',
    'ip address add 10.255.0.1/24 dev brcluster',
    'ip address add 10.254.0.1/24 dev brcluster',
  ]);
  assert.deepEqual(d.changes.map((c) => c.key), [
    `${SYSNET}.cluster.device`, `${SYSNET}.cluster.device`, `${SYSNET}.cluster.device`, `${SYSNET}.cluster.mtu`, `${SYSNET}.cluster.device`,
    `${SYSNET}.cluster.address`, `${SYSNET}.storage.address`,
  ]);
  assert.equal(d.unchanged, 1);
});

test('diff, a configured host with a floating address on the bridge: nothing to change, the extra address reported and kept', () => {
  const plan = planHostInterfaces(configOf(...SEPARATE));
  const observed: ObservedInterfaces = {
    links: [
      link('ens4', { master: 'brcluster' }), link('brcluster', { kind: 'bridge' }),
      link('ens5', { mtu: 9000, master: 'brstorage' }), link('brstorage', { kind: 'bridge', mtu: 9000 }),
      link('ens6', { master: 'brupstream' }), link('brupstream', { kind: 'bridge' }),
    ],
    addresses: [
      { device: 'brcluster', ip: '10.255.0.1', prefix: 24 }, { device: 'brcluster', ip: '10.255.0.254', prefix: 24 },
      { device: 'brstorage', ip: '10.254.0.1', prefix: 24 }, { device: 'brupstream', ip: '1.1.1.5', prefix: 24 },
    ],
    routes: [{ gateway: '1.1.1.1', device: 'brupstream' }],
  };
  const d = diffHostInterfaces(plan, observed);
  assert.deepEqual(d.changes, []);
  assert.equal(d.unchanged, 3 * 6 + 3 + 1);
  assert.deepEqual(d.extras, [{ device: 'brcluster', ip: '10.255.0.254', prefix: 24 }]);
  assert.deepEqual([d.warnings, d.problems], [[], []]);
});

test('diff: a missing device, a device in another bridge, a non-bridge named like ours are problems at the device key', () => {
  const plan = planHostInterfaces(configOf(...SEPARATE));
  const d = diffHostInterfaces(plan, {
    links: [link('ens5', { master: 'vmbr0' }), link('ens6'), link('brupstream', { kind: 'veth' })], addresses: [], routes: [],
  });
  assert.deepEqual(d.problems.map((p) => `${p.code} ${p.key}: ${p.message}`), [
    `HOSTNET_NO_DEVICE ${SYSNET}.cluster.device: device "ens4" does not exist`,
    `HOSTNET_CONFLICT ${SYSNET}.storage.device: device "ens5" is a port of "vmbr0", not of brstorage; it is not moved`,
    `HOSTNET_CONFLICT ${SYSNET}.upstream.device: "brupstream" exists and is not a bridge (veth); it is not replaced`,
  ]);
});

test('diff, the default route: one via another gateway is left alone (warned); via the same gateway elsewhere it is moved; a metric route does not block', () => {
  const plan = planHostInterfaces(configOf(...SEPARATE));
  const links = [link('ens4'), link('ens5', { mtu: 9000 }), link('ens6')];
  const routeOps = (routes: ObservedInterfaces['routes']) =>
    commands(diffHostInterfaces(plan, { links, addresses: [], routes })).filter((c) => c.startsWith('ip route'));
  const other = diffHostInterfaces(plan, { links, addresses: [], routes: [{ gateway: '192.168.1.1', device: 'eth0' }] });
  assert.deepEqual(commands(other).filter((c) => c.startsWith('ip route')), []);
  assert.match(other.warnings[0]?.message ?? '', /default route via 192\.168\.1\.1 dev eth0 exists; left alone/);
  assert.deepEqual(routeOps([{ gateway: '1.1.1.1', device: 'ens6' }]), ['ip route replace default via 1.1.1.1 dev brupstream']);
  assert.deepEqual(routeOps([{ gateway: '192.168.1.1', device: 'eth0', metric: 100 }]), ['ip route replace default via 1.1.1.1 dev brupstream']);
});

test('diff: the node address also found on another device is warned about, and still added on the bridge', () => {
  const plan = planHostInterfaces(configOf());
  const d = diffHostInterfaces(plan, { links: [link('ens4')], addresses: [{ device: 'ens4', ip: '10.255.0.1', prefix: 24 }], routes: [] });
  assert.ok(commands(d).includes('ip address add 10.255.0.1/24 dev brcluster'));
  assert.deepEqual(d.warnings.map((w) => `${w.key}: ${w.message}`), [`${SYSNET}.cluster.address: 10.255.0.1 is also on "ens4" (10.255.0.1/24); left alone there`]);
});
