import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig, type Config } from '@pvc/config';
import { mutate } from '@pvc/config/testing';
import { createLogger, rejectionOf, VirtualClock, type Logger } from '@pvc/runtime';
import { dump } from 'js-yaml';
import { FakeLinks, FakeSysctl, HostNetworkError, planSysctls, setupHostNetworking, type HostNetworkingResult } from './index.js';

const SYSNET = 'pvc.system.configuration.networking';
const configOf = (...edits: [string, unknown][]) => parseConfig(dump(mutate(...edits)), 'test.yaml');
const SEPARATE: [string, unknown][] = [
  [`${SYSNET}.storage.device`, 'ens5'], [`${SYSNET}.storage.mtu`, 9000],
  [`${SYSNET}.upstream.device`, 'ens6'], [`${SYSNET}.upstream.address`, '1.1.1.5/24'],
];

/** A host with ens4–ens6 (down, MTU 1500), every sysctl of the plan present, and a log to read. */
function world(config: Config) {
  const links = new FakeLinks().addDevice('ens4').addDevice('ens5').addDevice('ens6');
  const sysctl = new FakeSysctl(Object.fromEntries(planSysctls(config).map((s) => [s.key, '0'])));
  const lines: Record<string, unknown>[] = [];
  const logger: Logger = createLogger({ service: 'test', dates: false, destination: { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) } });
  const clock = new VirtualClock(0);
  const run = (): Promise<HostNetworkingResult> => setupHostNetworking(config, { sysctl, links, clock, logger });
  return { links, sysctl, lines, clock, run };
}

const INFO = 30;
const WARN = 40;

test('apply: a bare host is set up; a second run changes nothing and says so; each change logged once with key and command', async () => {
  const config = configOf(...SEPARATE);
  const w = world(config);
  const first = await w.run();
  assert.equal(first.interfaces.changes.length, 3 * 5 + 1 + 3 + 1, 'per device: up, bridge, port, bridge MTU, bridge up (+ ens5 MTU); 3 addresses; the route');
  assert.equal(first.interfaces.unchanged, 2, 'the MTU of ens4 and ens6');
  const changeLines = w.lines.filter((l) => typeof l.command === 'string');
  assert.deepEqual(changeLines.map((l) => l.command), first.interfaces.changes.map((c) => c.command));
  assert.ok(changeLines.every((l) => l.level === INFO && typeof l.key === 'string' && String(l.key).startsWith('pvc.')));
  assert.ok(changeLines.some((l) => l.command === 'ip link set ens5 mtu 9000' && l.key === `${SYSNET}.storage.mtu`));
  assert.ok(changeLines.some((l) => l.command === 'ip route replace default via 1.1.1.1 dev brupstream' && l.key === 'pvc.cluster.networks.upstream.gateway'));
  assert.equal(w.lines.filter((l) => l.msg === 'host interfaces: 20 changes, 2 already as configured').length, 1);
  assert.equal(w.sysctl.values.get('net.ipv4.conf.brcluster.rp_filter'), '0', 'the bridges exist before the sysctls');
  assert.deepEqual(w.links.probes.map((p) => `${p.device} ${p.ip}`).sort(), ['brcluster 10.255.0.1', 'brstorage 10.254.0.1', 'brupstream 1.1.1.5']);

  w.lines.length = 0;
  const opsBefore = w.links.ops.length;
  const second = await w.run();
  assert.deepEqual(second.interfaces.changes, []);
  assert.equal(second.interfaces.unchanged, 22);
  assert.equal(w.links.ops.length, opsBefore, 'no op on the second run');
  assert.equal(w.links.probes.length, 3, 'no probe on the second run');
  assert.deepEqual(w.lines.filter((l) => String(l.msg).startsWith('host interface')).map((l) => l.msg), ['host interfaces: 0 changes, 22 already as configured']);
});

test('apply: an address found on a bridge (a floating address) is kept and logged; nothing else changes', async () => {
  const config = configOf();
  const w = world(config);
  await w.run();
  w.links.addExistingAddress('brcluster', '10.255.0.254', 24);
  w.lines.length = 0;
  const r = await w.run();
  assert.deepEqual(r.interfaces.changes, []);
  assert.deepEqual(r.interfaces.extras, ['10.255.0.254/24 on brcluster']);
  assert.ok(w.lines.some((l) => l.level === INFO && JSON.stringify(l.addresses) === '["10.255.0.254/24 on brcluster"]'));
  assert.ok(!w.links.ops.some((o) => o.kind === 'add-address' && o.cidr.startsWith('10.255.0.254')));
});

test('apply: a missing device fails naming the key, before any change', async () => {
  const w = world(configOf([`${SYSNET}.cluster.device`, 'ens9'], [`${SYSNET}.storage.device`, 'ens9'], [`${SYSNET}.upstream.device`, 'ens9']));
  const err = await rejectionOf(w.run(), HostNetworkError);
  assert.equal(err.code, 'HOSTNET_NO_DEVICE');
  assert.equal(err.message, `${SYSNET}.cluster.device: device "ens9" does not exist`);
  assert.deepEqual(w.links.ops, []);
  assert.deepEqual(w.sysctl.writes, [], 'the sysctls are left alone too');
});

test('apply: an MTU the device refuses fails naming the mtu key', async () => {
  const w = world(configOf([`${SYSNET}.cluster.mtu`, 9000]));
  w.links.addDevice('ens4', { maxMtu: 1500 });
  const err = await rejectionOf(w.run(), HostNetworkError);
  assert.equal(err.code, 'HOSTNET_MTU_REFUSED');
  assert.equal(err.message, `${SYSNET}.cluster.mtu: device "ens4" refused MTU 9000 (Error: mtu greater than device maximum.)`);
});

test('apply: an address another host answers for fails naming the address key; no address is added', async () => {
  const w = world(configOf());
  w.links.addPeer('ens4', '10.254.0.1', '02:aa:bb:cc:dd:ee');
  const err = await rejectionOf(w.run(), HostNetworkError);
  assert.equal(err.code, 'HOSTNET_ADDRESS_IN_USE');
  assert.equal(err.message, `${SYSNET}.storage.address: address 10.254.0.1 is already used by another host on brcluster (02:aa:bb:cc:dd:ee)`);
  assert.deepEqual(w.links.ops.filter((o) => o.kind === 'add-address'), []);
});

test('apply: an unreachable gateway fails naming the gateway key, before any change', async () => {
  const w = world(configOf(...SEPARATE, ['pvc.cluster.networks.upstream.gateway', '9.9.9.9']));
  const err = await rejectionOf(w.run(), HostNetworkError);
  assert.equal(err.code, 'HOSTNET_GATEWAY_UNREACHABLE');
  assert.match(err.message, /^pvc\.cluster\.networks\.upstream\.gateway: gateway 9\.9\.9\.9 is not inside any network this node has an address on/);
  assert.deepEqual(w.links.ops, []);
});

test('apply: a bridge without carrier (cable out) gets its addresses unchecked, with a warning, after the bounded wait', async () => {
  const w = world(configOf());
  w.links.unplugged.add('ens4');
  const done = w.run();
  await w.clock.advance(5_100);
  const r = await done;
  assert.ok(r.interfaces.changes.some((c) => c.command === 'ip address add 10.255.0.1/24 dev brcluster'));
  assert.deepEqual(w.links.probes, []);
  assert.equal(w.lines.filter((l) => l.level === WARN && /has no carrier/.test(String(l.msg))).length, 2);
});

test('apply: a failed command or read is a HostNetworkError naming the key; nothing after it runs', async () => {
  const w = world(configOf());
  w.links.fail['add-address'] = 1;
  const err = await rejectionOf(w.run(), HostNetworkError);
  assert.equal(err.code, 'HOSTNET_FAILED');
  assert.match(err.message, /^pvc\.system\.configuration\.networking\.cluster\.address: cluster address 10\.255\.0\.1\/24 on brcluster failed: ip address add 10\.255\.0\.1\/24 dev brcluster: RTNETLINK/);
  assert.deepEqual(w.links.ops.filter((o) => o.kind === 'add-address'), []);
  w.links.fail.read = 1;
  const read = await rejectionOf(w.run(), HostNetworkError);
  assert.match(read.message, /cannot read the host's interfaces/);
});

test('setupHostNetworking: networking disabled reads and touches nothing', async () => {
  const config = configOf(['pvc.functions.enable_networking', false], [SYSNET, undefined], ['pvc.cluster.networks', undefined], ['pvc.coordinator', undefined]);
  const w = world(config);
  w.links.fail.read = 1;
  const r = await w.run();
  assert.deepEqual(r, { interfaces: { changes: [], unchanged: 0, extras: [] }, sysctls: [] });
  assert.equal(w.links.fail.read, 1, 'not even read');
  assert.deepEqual(w.links.ops, []);
});
