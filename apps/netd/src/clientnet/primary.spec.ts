import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger, flushMicrotasks, VirtualClock } from '@pvc/runtime';
import { newNetworkObject, paths } from '@pvc/zk';
import { FakeZkServer } from '@pvc/zk/testing';
import { DnsmasqProcess } from '../dhcp/index.js';
import { FakeDnsmasqExec, FakeDnsmasqHost } from '../dhcp/testing/fake-dnsmasq.js';
import { FakeAddresses } from '../floating/fake-addresses.js';
import { FakeDevices } from './fake-devices.js';
import { ClientNetworkFollower } from './follower.js';
import { ClientNetworkPrimary } from './primary.js';

async function rig() {
  const clock = new VirtualClock(1_700_000_000_000);
  const server = new FakeZkServer({ clock });
  const admin = await server.connect();
  for (const p of [paths.nodes, paths.networks]) await admin.ensurePath(p);
  await admin.ensurePath(`${paths.nodes}/hv1`);
  const devices = new FakeDevices();
  devices.addLink('brcluster', { kind: 'bridge', mtu: 1500 });
  const addresses = new FakeAddresses([], () => clock.now());
  const exec = new FakeDnsmasqExec();
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ service: 'netd', dates: false, destination: { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) } });
  const procs = new Map<string, DnsmasqProcess>();
  const hosts = new Map<string, FakeDnsmasqHost>();
  const primary = new ClientNetworkPrimary({
    addresses, logger,
    dnsmasq: (vni) => {
      const host = new FakeDnsmasqHost();
      hosts.set(vni, host);
      const p = new DnsmasqProcess(vni, {
        exec, clock, logger, host, dirs: { dynamicDirectory: '/run/pvc', logDirectory: '/var/log/pvc' },
        zk: { hosts: ['hv1'], port: 2181 }, hookCommand: ['/usr/bin/node', '/hook.js'],
      });
      procs.set(vni, p);
      return p;
    },
  });
  const zk = await server.connect();
  const follower = new ClientNetworkFollower({
    zk, devices, clock, logger, node: 'hv1', primary, resyncMs: 5_000,
    own: { facts: { clusterDevice: 'brcluster', clusterMtu: 1500, clusterAddress: '10.0.0.1' }, peerAddress: undefined },
  });
  // The fake address port needs the bridges it is asked about: mirror the fake devices' bridges.
  const mirror = (): void => {
    for (const name of devices.links.keys()) if (name.startsWith('vmbr') && !addresses.devices.has(name)) addresses.devices.set(name, []);
  };
  const settle = async (ms = 1_000): Promise<void> => {
    for (let t = 0; t < ms; t += 100) {
      mirror();
      await clock.advance(100);
      await flushMicrotasks();
    }
  };
  const ac = new AbortController();
  follower.start(ac.signal);
  const o = newNetworkObject({ vni: 100, description: 'n100', type: 'managed', ip4Network: '10.100.0.0/24', ip4Gateway: '10.100.0.1', dhcp4: true, dhcp4Start: '10.100.0.50', dhcp4End: '10.100.0.99' });
  await admin.createObject(o.root, o.entries);
  await settle();
  const alive = (): DnsmasqProcess[] => [...procs.values()].filter((p) => p.state === 'running');
  const stop = async (): Promise<void> => {
    ac.abort();
    await follower.stop();
    await zk.close();
    await admin.close();
  };
  return { server, admin, zk, devices, addresses, follower, primary, procs, hosts, alive, settle, lines, stop };
}

describe('ClientNetworkPrimary through the follower (fakes, virtual time)', () => {
  it('secondary: nothing served; takeover: gateway on vmbr<vni>, then dnsmasq; relinquish: dnsmasq stopped, then the gateway removed', async () => {
    const r = await rig();
    assert.deepEqual(r.primary.vnis, []);
    assert.deepEqual(r.addresses.devices.get('vmbr100'), []);
    const taking = r.follower.setPrimary(true, 'test');
    await r.settle(1_000);
    await taking;
    assert.deepEqual(r.addresses.devices.get('vmbr100'), ['10.100.0.1/24']);
    assert.equal(r.alive().length, 1);
    const giving = r.follower.setPrimary(false, 'test');
    await r.settle(2_000);
    await giving;
    assert.equal(r.alive().length, 0);
    assert.deepEqual(r.addresses.devices.get('vmbr100'), []);
    const order = r.addresses.ops.map((op) => `${op.op} ${op.what}`);
    assert.deepEqual(order.filter((x) => !x.startsWith('announce')), ['add 10.100.0.1/24', 'remove 10.100.0.1/24']);
    assert.ok(r.hosts.get('100')!.calls.includes('remove'), 'the hosts directory and pid file are removed at the relinquish');
    await r.stop();
  });

  it('a relinquish without Zookeeper still stops dnsmasq and removes the gateway', async () => {
    const r = await rig();
    const taking = r.follower.setPrimary(true, 'test');
    await r.settle(1_000);
    await taking;
    assert.equal(r.alive().length, 1);
    await r.zk.close(); // no Zookeeper for the follower any more
    const giving = r.follower.setPrimary(false, 'lease lost');
    await r.settle(2_000);
    await giving;
    assert.equal(r.alive().length, 0);
    assert.deepEqual(r.addresses.devices.get('vmbr100'), []);
    await r.stop().catch(() => undefined);
  });

  it('a network removed while primary: its dnsmasq stops and its gateway goes', async () => {
    const r = await rig();
    const taking = r.follower.setPrimary(true, 'test');
    await r.settle(1_000);
    await taking;
    await r.admin.delete(paths.network(100).root);
    await r.settle(2_000);
    assert.equal(r.alive().length, 0);
    assert.deepEqual(r.primary.vnis, []);
    assert.ok(r.hosts.get('100')!.calls.includes('remove'), 'the hosts directory and pid file are removed');
    await r.stop();
  });
});
