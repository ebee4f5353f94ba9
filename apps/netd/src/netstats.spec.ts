import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger, VirtualClock } from '@pvc/runtime';
import { FakeSysNet } from './host/fake-sysnet.js';
import { configuredDevices, NetStatsSampler, selectDevices } from './netstats.js';
import type { NodeNetworking } from '@pvc/config';

function setup(windowSamples = 5, configured: string[] = []) {
  const clock = new VirtualClock(1_000_000);
  const sysnet = new FakeSysNet();
  const lines: string[] = [];
  const logger = createLogger({ service: 'test', destination: { write: (s: string) => void lines.push(s) } });
  const sampler = new NetStatsSampler({ sysnet, clock, logger, windowSamples, configured: new Set(configured) });
  const ac = new AbortController();
  let running: Promise<void> = Promise.resolve();
  // The first sample is taken at once when the sampler starts (time 0 of each test).
  const start = (): void => void (running = sampler.run(ac.signal));
  const stop = async (): Promise<void> => {
    ac.abort();
    await running;
  };
  return { clock, sysnet, sampler, start, stop, logs: () => lines.map((l) => (JSON.parse(l) as { msg: string }).msg) };
}

test('device selection: physical NICs plus configured devices, never lo', () => {
  const devices = [
    { name: 'lo', physical: false },
    { name: 'eth0', physical: true },
    { name: 'bond0', physical: false },
    { name: 'vmbr100', physical: false },
  ];
  assert.deepEqual(selectDevices(devices, new Set()), ['eth0']);
  assert.deepEqual(selectDevices(devices, new Set(['bond0', 'lo', 'absent0'])), ['eth0', 'bond0']);
  const networking = {
    bridge_device: 'bond0',
    sriov_enable: true,
    sriov_device: [{ phy: 'ens1f0' }],
    upstream: { device: 'ens4' },
    cluster: { device: 'ens4.100' },
    storage: { device: 'ens4' },
  } as unknown as NodeNetworking;
  assert.deepEqual([...configuredDevices(networking)].sort(), ['bond0', 'ens1f0', 'ens4', 'ens4.100']);
  assert.deepEqual([...configuredDevices(undefined)], []);
});

test('figures appear after a full window and average traffic over the keepalive interval', async () => {
  const { clock, sysnet, sampler, start, stop } = setup(5);
  sysnet.add('eth0', true, { speedMbps: 1000, operstate: 'up', rxBytes: 10_000 });
  sysnet.add('ifb0', false);
  start();
  await clock.advance(0);
  assert.equal(JSON.stringify(sampler.snapshot()), '{}');
  for (let s = 0; s < 4; s++) await clock.advance(1000);
  assert.deepEqual(sampler.snapshot(), {}, 'five samples are not yet a five-second window');
  // 1250 bytes/s in, 125 bytes/s out, 10 packets/s in, 3 packets/s out from now on.
  for (let s = 0; s < 5; s++) {
    sysnet.traffic('eth0', { rxBytes: 1250, txBytes: 125, rxPackets: 10, txPackets: 3 });
    await clock.advance(1000);
  }
  assert.deepEqual(sampler.snapshot(), {
    eth0: { rx_bps: 10_000, rx_pps: 10, tx_bps: 1000, tx_pps: 3, total_bps: 11_000, total_pps: 13, link_speed: 1_000_000_000, state: 'up' },
  });
  // Traffic stops: the average decays over the window and reaches zero after it.
  await clock.advance(2000);
  assert.equal(sampler.snapshot().eth0?.rx_bps, 6000);
  await clock.advance(3000);
  assert.equal(sampler.snapshot().eth0?.total_bps, 0);
  await stop();
  assert.equal(clock.pending(), 0, 'the sampler left a timer behind');
});

test('unknown link speed is 0; a vanished device is dropped; a re-created one restarts its window', async () => {
  const { clock, sysnet, sampler, start, stop } = setup(2);
  sysnet.add('eth0', true, { speedMbps: null, operstate: 'down', rxBytes: 5000 });
  start();
  await clock.advance(2000);
  assert.deepEqual(sampler.snapshot().eth0, { rx_bps: 0, rx_pps: 0, tx_bps: 0, tx_pps: 0, total_bps: 0, total_pps: 0, link_speed: 0, state: 'down' });
  sysnet.remove('eth0');
  await clock.advance(1000);
  assert.deepEqual(sampler.snapshot(), {});
  sysnet.add('eth0', true, { rxBytes: 10 }); // counters restart lower
  await clock.advance(1000);
  assert.deepEqual(sampler.snapshot(), {}, 'a new window is needed');
  await clock.advance(2000);
  assert.equal(sampler.snapshot().eth0?.rx_bps, 0);
  await stop();
});

test('a counter going backwards restarts the window instead of reporting a negative rate', async () => {
  const { clock, sysnet, sampler, start, stop } = setup(2);
  sysnet.add('eth0', true, { rxBytes: 1_000_000 });
  start();
  await clock.advance(2000);
  assert.ok(sampler.snapshot().eth0);
  sysnet.add('eth0', true, { rxBytes: 100 });
  await clock.advance(1000);
  assert.deepEqual(sampler.snapshot(), {});
  sysnet.traffic('eth0', { rxBytes: 100 });
  await clock.advance(1000);
  sysnet.traffic('eth0', { rxBytes: 100 });
  await clock.advance(1000);
  assert.equal(sampler.snapshot().eth0?.rx_bps, 800);
  await stop();
});

test('read failures drop that device, are logged once, and recovery is logged', async () => {
  const { clock, sysnet, sampler, start, stop, logs } = setup(1);
  sysnet.add('eth0', true).add('eth1', true);
  start();
  await clock.advance(1000);
  assert.deepEqual(Object.keys(sampler.snapshot()), ['eth0', 'eth1']);
  sysnet.failReads('eth1', 3);
  await clock.advance(3000);
  assert.deepEqual(Object.keys(sampler.snapshot()), ['eth0']);
  await clock.advance(2000);
  assert.deepEqual(Object.keys(sampler.snapshot()), ['eth0', 'eth1']);
  assert.deepEqual(logs(), ['network statistics sampling problem', 'network statistics sampling recovered']);
  await stop();
});
