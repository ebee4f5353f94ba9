import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '@pvc/runtime';
import { paths, type ZkClient } from '@pvc/zk';
import { FakeZkServer } from '@pvc/zk/testing';
import { runLeaseHook } from './lease-hook-run.js';
import { initLine, readLease } from './lease-store.js';

const MAC = '52:54:00:12:34:56';
const ROOT = paths.network('100').lease(MAC).root;

async function setup(withNetwork = true) {
  const clock = new VirtualClock(0);
  const server = new FakeZkServer({ clock });
  const zk = await server.connect();
  await zk.ensurePath(paths.networks);
  if (withNetwork) await zk.createObject(paths.network('100').root, [['', 'net100'], ['dhcp4_leases', ''], ['dhcp4_reservations', '']]);
  const connects: string[] = [];
  const hook = async (argv: string[], env: Record<string, string> = {}) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runLeaseHook(
      { argv, env: { DNSMASQ_BRIDGE_INTERFACE: 'vmbr100', PVC_ZK_HOSTS: 'hv1,hv2', PVC_ZK_PORT: '2181', ...env }, stdout: (t) => out.push(t), stderr: (l) => err.push(l) },
      async (hosts, port): Promise<ZkClient> => {
        connects.push(`${hosts.join(',')}:${port}`);
        return server.connect();
      },
    );
    return { code, stdout: out.join(''), stderr: err.join('\n') };
  };
  return { zk, hook, connects };
}

const ADD_ENV = { DNSMASQ_LEASE_EXPIRES: '1800000000', DNSMASQ_CLIENT_ID: `01:${MAC}` };

test('add writes the lease with the original\'s children; the hook connects to the coordinators it is given', async () => {
  const { zk, hook, connects } = await setup();
  const r = await hook(['add', MAC, '10.100.0.150', 'guest1'], ADD_ENV);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(connects, ['hv1,hv2:2181']);
  assert.equal(await zk.read(ROOT), '');
  assert.deepEqual((await zk.children(ROOT)).sort(), ['clientid', 'expiry', 'hostname', 'ipaddr']);
  assert.deepEqual(await readLease(zk, '100', MAC), { mac: MAC, expiry: '1800000000', ipaddr: '10.100.0.150', hostname: 'guest1', clientid: `01:${MAC}` });
});

test('add without hostname or client id: hostname "", clientid "*"; expiry 0 without DNSMASQ_LEASE_EXPIRES', async () => {
  const { zk, hook } = await setup();
  assert.equal((await hook(['add', MAC, '10.100.0.150'])).code, 0);
  assert.deepEqual(await readLease(zk, '100', MAC), { mac: MAC, expiry: '0', ipaddr: '10.100.0.150', hostname: '', clientid: '*' });
});

test('add over an existing lease replaces the whole subtree in one transaction (stray children go)', async () => {
  const { zk, hook } = await setup();
  await hook(['add', MAC, '10.100.0.150', 'guest1'], ADD_ENV);
  await zk.create(`${ROOT}/stray`, 'x');
  assert.equal((await hook(['add', MAC, '10.100.0.151'], { DNSMASQ_LEASE_EXPIRES: '1800000100' })).code, 0);
  assert.deepEqual((await zk.children(ROOT)).sort(), ['clientid', 'expiry', 'hostname', 'ipaddr']);
  assert.equal((await readLease(zk, '100', MAC))?.ipaddr, '10.100.0.151');
});

test('old: rewritten only when it differs from the stored lease (a renewal moves the expiry)', async () => {
  const { zk, hook } = await setup();
  await hook(['add', MAC, '10.100.0.150', 'guest1'], ADD_ENV);
  const v0 = (await zk.exists(`${ROOT}/expiry`))!.czxid;
  assert.equal((await hook(['old', MAC, '10.100.0.150', 'guest1'], { ...ADD_ENV, DNSMASQ_DATA_MISSING: '1' })).code, 0);
  assert.equal((await zk.exists(`${ROOT}/expiry`))!.czxid, v0, 'an echo of the stored lease writes nothing');
  assert.equal((await hook(['old', MAC, '10.100.0.150', 'guest1'], { ...ADD_ENV, DNSMASQ_LEASE_EXPIRES: '1800000500' })).code, 0);
  assert.equal((await readLease(zk, '100', MAC))?.expiry, '1800000500');
});

test('del deletes the lease recursively; an absent lease is fine', async () => {
  const { zk, hook } = await setup();
  await hook(['add', MAC, '10.100.0.150'], ADD_ENV);
  assert.equal((await hook(['del', MAC, '10.100.0.150'])).code, 0);
  assert.equal(await zk.exists(ROOT), undefined);
  assert.equal((await hook(['del', MAC, '10.100.0.150'])).code, 0);
});

test('init prints every stored lease in dnsmasq\'s lease-file format ("*" for no hostname); a malformed one is left out and named', async () => {
  const { zk, hook } = await setup();
  await hook(['add', MAC, '10.100.0.150', 'guest1'], ADD_ENV);
  await hook(['add', '52:54:00:00:00:02', '10.100.0.151'], { DNSMASQ_LEASE_EXPIRES: '1800000001' });
  await hook(['add', '52:54:00:00:00:03', '10.100.0.152'], { DNSMASQ_LEASE_EXPIRES: '1800000002' });
  await zk.set(`${paths.network('100').lease('52:54:00:00:00:03').root}/expiry`, 'soon');
  const r = await hook(['init']);
  assert.equal(r.code, 0);
  assert.deepEqual(r.stdout.split('\n').sort(), ['', `1800000000 ${MAC} 10.100.0.150 guest1 01:${MAC}`, '1800000001 52:54:00:00:00:02 10.100.0.151 * *'].sort());
  assert.match(r.stderr, /dhcp4_leases\/52:54:00:00:00:03 left out: expiry "soon" is not a number/);
});

test('init with no leases parent prints nothing; add then fails naming the missing key, exit 1', async () => {
  const { hook } = await setup(false);
  const init = await hook(['init']);
  assert.equal(init.code, 0);
  assert.equal(init.stdout, '');
  const add = await hook(['add', MAC, '10.100.0.150'], ADD_ENV);
  assert.equal(add.code, 1);
  assert.match(add.stderr, /\/networks\/100\/dhcp4_leases\/52:54:00:12:34:56: lease not stored: \/networks\/100\/dhcp4_leases does not exist/);
});

test('bad calls: no action (2), missing MAC (2), no bridge or ZK hosts in env (1); unknown actions ignored (0) without connecting', async () => {
  const { hook, connects } = await setup();
  assert.equal((await hook([])).code, 2);
  assert.equal((await hook(['add'])).code, 2);
  const noBridge = await hook(['init'], { DNSMASQ_BRIDGE_INTERFACE: '' });
  assert.equal(noBridge.code, 1);
  assert.match(noBridge.stderr, /DNSMASQ_BRIDGE_INTERFACE is not set/);
  assert.equal((await hook(['init'], { PVC_ZK_HOSTS: '' })).code, 1);
  assert.equal((await hook(['arp-add', MAC, '10.0.0.1'])).code, 0);
  assert.equal((await hook(['tftp', '1234', '10.0.0.1', '/x'])).code, 0);
  assert.deepEqual(connects, []);
});

test('Zookeeper unreachable: exit 1 naming where it looked', async () => {
  const code = await runLeaseHook(
    { argv: ['init'], env: { DNSMASQ_BRIDGE_INTERFACE: 'vmbr100', PVC_ZK_HOSTS: 'hv1' }, stdout: () => undefined, stderr: (l) => assert.match(l, /Zookeeper at hv1 port 2181/) },
    () => Promise.reject(new Error('connection timed out')),
  );
  assert.equal(code, 1);
});

test('initLine refuses white space that would shift dnsmasq\'s fields', () => {
  assert.deepEqual(initLine({ mac: MAC, expiry: '1', ipaddr: '10.0.0.1', hostname: 'a b', clientid: '*' }), { problem: 'hostname "a b" contains white space' });
});
