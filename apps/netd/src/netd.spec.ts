import { test } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger, VirtualClock } from '@pvc/runtime';
import { FakeZkServer } from '@pvc/zk/testing';
import { FakeSysNet } from './host/fake-sysnet.js';
import { Netd } from './netd.js';
import { NetworkCounter } from './network-count.js';
import { NetStatsSampler } from './netstats.js';
import { PrimaryRole, type PrimaryDuty } from '@pvc/rpc';

test('netd answers stats as JSON text with the network count, and drops the primary role at shutdown', async () => {
  const clock = new VirtualClock(1_700_000_000_000);
  const server = new FakeZkServer({ clock });
  const admin = await server.connect();
  await admin.ensurePath('/networks/1000');
  const zk = await server.connect();
  const sysnet = new FakeSysNet().add('eth0', true, { speedMbps: 10_000 });
  const events: string[] = [];
  const duty: PrimaryDuty = { name: 'probe', start: async () => void events.push('start'), stop: async () => void events.push('stop') };
  const logger = silentLogger();
  const netd = new Netd({
    logger,
    sampler: new NetStatsSampler({ sysnet, clock, logger, windowSamples: 1, configured: new Set() }),
    networks: new NetworkCounter(zk, logger),
    role: new PrimaryRole({ service: 'netd', logger, duties: [duty] }),
  });
  const ac = new AbortController();
  const running = netd.run(ac.signal);
  await clock.advance(0);
  assert.deepEqual(netd.getNetworkStats(), { statsJson: '{}', networkCount: 1 });
  sysnet.traffic('eth0', { rxBytes: 100, rxPackets: 1 });
  await clock.advance(1000);
  const stats = JSON.parse(netd.getNetworkStats().statsJson) as Record<string, Record<string, number | string>>;
  assert.deepEqual(stats, {
    eth0: { rx_bps: 800, rx_pps: 1, tx_bps: 0, tx_pps: 0, total_bps: 800, total_pps: 1, link_speed: 10_000_000_000, state: 'up' },
  });
  assert.equal(await netd.setPrimary(true, 'takeover'), true);
  assert.equal(netd.role.current, 'primary');
  ac.abort();
  await running;
  assert.deepEqual(events, ['start', 'stop']);
  assert.equal(netd.role.current, 'secondary');
  await zk.close();
  await admin.close();
});
