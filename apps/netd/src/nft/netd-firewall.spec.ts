import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeExec, silentLogger, VirtualClock, withTempDir } from '@pvc/runtime';
import { FakeZkServer } from '@pvc/zk/testing';
import { PrimaryRole } from '@pvc/rpc';
import { FakeSysNet } from '../host/fake-sysnet.js';
import { Netd } from '../netd.js';
import { NetworkCounter } from '../network-count.js';
import { NetStatsSampler } from '../netstats.js';
import { Firewall } from './firewall.js';

async function runNetdWith(dir: string, exec: FakeExec, enabled = true) {
  const clock = new VirtualClock(1_700_000_000_000);
  const server = new FakeZkServer({ clock });
  const zk = await server.connect();
  const logger = silentLogger();
  const firewall = new Firewall({ enabled, dynamicDirectory: dir, exec, logger });
  const netd = new Netd({
    logger,
    sampler: new NetStatsSampler({ sysnet: new FakeSysNet().add('eth0', true), clock, logger, windowSamples: 1, configured: new Set() }),
    networks: new NetworkCounter(zk, logger),
    role: new PrimaryRole({ service: 'netd', logger, duties: [] }),
    firewall,
  });
  const ac = new AbortController();
  const running = netd.run(ac.signal);
  await firewall.idle();
  await clock.advance(1000);
  const stop = async (): Promise<void> => {
    ac.abort();
    await running;
    await zk.close();
  };
  return { netd, firewall, stop };
}

test('netd loads the firewall at start and keeps running when nft rejects it', () =>
  withTempDir('pvc-netd-nft-', async (dir) => {
    const exec = new FakeExec().on('nft', { exitCode: 1, stderr: `${dir}/nft/networks/7.nft:1:1-3: Error: syntax error\n` });
    const { netd, firewall, stop } = await runNetdWith(dir, exec);
    assert.equal(firewall.last?.status, 'failed');
    assert.equal(netd.firewall, firewall);
    assert.match(netd.getNetworkStats().statsJson, /"eth0"/, 'the sampler runs after a failed firewall load');
    exec.on('nft', { exitCode: 0 });
    assert.equal((await netd.firewall?.reload('fixed'))?.status, 'loaded');
    await stop();
  }));

test('netd with networking disabled runs without touching the firewall', () =>
  withTempDir('pvc-netd-nft-', async (dir) => {
    const exec = new FakeExec().on('nft', { exitCode: 0 });
    const { firewall, stop } = await runNetdWith(dir, exec, false);
    assert.equal(firewall.passes, 0);
    assert.deepEqual(exec.lines(), []);
    await stop();
  }));
