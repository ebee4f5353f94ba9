// libs/hostnet's host interface set-up for real (root only): each test gets a throw-away network
// namespace with veth devices named as in pvcnoded.yaml, their other ends in a "segment" namespace
// where other hosts' addresses live. setupHostNetworking runs there through the real ports (`ip`,
// `arping -D`, `sysctl`), is read back with `ip -json`, and a second run must change nothing.
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, test } from 'node:test';
import { parseConfig, type Config } from '@pvc/config';
import { mutate } from '@pvc/config/testing';
import { createExecSysctl, createIpLinks, HostNetworkError, setupHostNetworking, type HostNetworkingResult } from '@pvc/hostnet';
import { realClock, rejectionOf, silentLogger } from '@pvc/runtime';
import { dump } from 'js-yaml';
import { sweepStaleNamespaces, TestHost } from './netns.js';

const SYSNET = 'pvc.system.configuration.networking';
const NETS = 'pvc.cluster.networks';
/** Cluster on ens4, storage on ens5 (MTU 9000), upstream on ens6: three bridges, a default route. */
const SEPARATE: [string, unknown][] = [
  [`${NETS}.upstream.network`, '10.201.0.0/24'], [`${NETS}.upstream.floating_ip`, '10.201.0.254/24'], [`${NETS}.upstream.gateway`, '10.201.0.250'],
  [`${SYSNET}.storage.device`, 'ens5'], [`${SYSNET}.storage.mtu`, 9000],
  [`${SYSNET}.upstream.device`, 'ens6'], [`${SYSNET}.upstream.address`, 'by-id'],
];
const configOf = (...edits: [string, unknown][]): Config => parseConfig(dump(mutate(...edits)), 'test.yaml');

let h: TestHost;
before(() => sweepStaleNamespaces());
beforeEach(async () => {
  h = await TestHost.create();
});
afterEach(async () => {
  await h.destroy();
});
after(async () => {
  await sweepStaleNamespaces();
});

function setup(config: Config): Promise<HostNetworkingResult> {
  return setupHostNetworking(config, { links: createIpLinks(h.exec), sysctl: createExecSysctl(h.exec), clock: realClock, logger: silentLogger() });
}

interface IpLink { ifname: string; mtu: number; flags: string[]; master?: string; linkinfo?: { info_kind?: string; info_data?: { stp_state?: number; forward_delay?: number } } }
async function linksOf(): Promise<Map<string, IpLink>> {
  const rows = JSON.parse(await h.ip(['-json', '-d', 'link', 'show'])) as IpLink[];
  return new Map(rows.map((l) => [l.ifname, l]));
}
async function addressesOf(dev: string): Promise<string[]> {
  const rows = JSON.parse(await h.ip(['-json', '-4', 'address', 'show', 'dev', dev])) as { addr_info: { local: string; prefixlen: number }[] }[];
  return rows.flatMap((r) => r.addr_info.map((a) => `${a.local}/${a.prefixlen}`)).sort();
}

test('three devices: bridges (STP off, no forward delay), MTUs, addresses, default route, bridge sysctls; a second run changes nothing and keeps a floating address', async () => {
  for (const d of ['ens4', 'ens5', 'ens6']) await h.addDevice(d);
  const config = configOf(...SEPARATE);
  const first = await setup(config);
  assert.equal(first.interfaces.changes.length, 20, first.interfaces.changes.map((c) => c.command).join('\n'));

  const links = await linksOf();
  for (const [dev, br, mtu] of [['ens4', 'brcluster', 1500], ['ens5', 'brstorage', 9000], ['ens6', 'brupstream', 1500]] as const) {
    const d = links.get(dev);
    const b = links.get(br);
    assert.equal(d?.master, br, `${dev} is a port of ${br}`);
    assert.deepEqual([d?.mtu, b?.mtu], [mtu, mtu], `${dev}/${br} MTU`);
    assert.ok(d?.flags.includes('UP') && b?.flags.includes('UP'), `${dev} and ${br} up`);
    assert.equal(b?.linkinfo?.info_kind, 'bridge');
    assert.deepEqual([b?.linkinfo?.info_data?.stp_state, b?.linkinfo?.info_data?.forward_delay], [0, 0], `${br}: STP off, no forward delay`);
  }
  assert.deepEqual(await addressesOf('brcluster'), ['10.255.0.1/24']);
  assert.deepEqual(await addressesOf('brstorage'), ['10.254.0.1/24']);
  assert.deepEqual(await addressesOf('brupstream'), ['10.201.0.1/24']);
  assert.deepEqual(JSON.parse(await h.ip(['-json', '-4', 'route', 'show', 'default'])), [{ dst: 'default', gateway: '10.201.0.250', dev: 'brupstream', flags: [] }]);
  const rpFilter = first.sysctls.find((s) => s.key === 'net.ipv4.conf.brcluster.rp_filter');
  assert.ok(rpFilter && rpFilter.outcome !== 'absent' && rpFilter.outcome !== 'failed', `brcluster's rp_filter is written: ${JSON.stringify(rpFilter)}`);

  // The primary's floating address, added later by netd: kept, reported, never counted as a change.
  await h.ip(['address', 'add', '10.255.0.254/24', 'dev', 'brcluster']);
  const second = await setup(config);
  assert.deepEqual(second.interfaces.changes, [], 'the second run changed something');
  assert.equal(second.interfaces.unchanged, first.interfaces.changes.length + first.interfaces.unchanged);
  assert.deepEqual(second.interfaces.extras, ['10.255.0.254/24 on brcluster']);
  assert.deepEqual(second.sysctls.filter((s) => s.outcome === 'set'), []);
  assert.deepEqual(await addressesOf('brcluster'), ['10.255.0.1/24', '10.255.0.254/24']);
});

test('the sample layout (everything on ens4): the storage address on brcluster, no default route without an upstream address', async () => {
  await h.addDevice('ens4');
  const r = await setup(configOf());
  assert.ok(r.interfaces.changes.length > 0);
  assert.deepEqual(await addressesOf('brcluster'), ['10.254.0.1/24', '10.255.0.1/24']);
  assert.equal((await linksOf()).get('brstorage'), undefined);
  assert.deepEqual(JSON.parse(await h.ip(['-json', '-4', 'route', 'show', 'default'])), []);
  assert.deepEqual((await setup(configOf())).interfaces.changes, []);
});

test('a device that does not exist: the error names the key and nothing is changed', async () => {
  await h.addDevice('ens4');
  const err = await rejectionOf(setup(configOf(...SEPARATE)), HostNetworkError);
  assert.equal(err.message, `${SYSNET}.storage.device: device "ens5" does not exist; ${SYSNET}.upstream.device: device "ens6" does not exist`);
  assert.deepEqual([...(await linksOf()).keys()].sort(), ['ens4', 'lo']);
});

test('an MTU the device refuses (a VXLAN device over a 1500 link): the error names the mtu key', async () => {
  await h.addDevice('ens3');
  await h.ip(['link', 'add', 'ens4', 'type', 'vxlan', 'id', '42', 'dstport', '4789', 'dev', 'ens3']);
  const err = await rejectionOf(setup(configOf([`${SYSNET}.cluster.mtu`, 9000], [`${SYSNET}.storage.mtu`, 9000], [`${SYSNET}.upstream.mtu`, 9000])), HostNetworkError);
  assert.equal(err.code, 'HOSTNET_MTU_REFUSED');
  assert.match(err.message, /^pvc\.system\.configuration\.networking\.cluster\.mtu: device "ens4" refused MTU 9000 \(/);
});

test('an address another host already uses: found by arping -D, the error names the address key, no address is added', async () => {
  await h.addDevice('ens4');
  await h.addPeer('ens4', '10.255.0.1/24');
  const err = await rejectionOf(setup(configOf()), HostNetworkError);
  assert.equal(err.code, 'HOSTNET_ADDRESS_IN_USE');
  assert.match(err.message, /^pvc\.system\.configuration\.networking\.cluster\.address: address 10\.255\.0\.1 is already used by another host on brcluster \([0-9a-f:]{17}\)$/);
  assert.deepEqual(await addressesOf('brcluster'), []);
});
