/**
 * The health monitor end to end against a real ZooKeeper server and the real host: the shipped
 * plugins (from the source directory, linked into a plugin directory) plus a plugin that never
 * returns. Keys written, health computed, the hung plugin reported without stalling the others,
 * the loop or a keepalive-like timer.
 */
import assert from 'node:assert/strict';
import { symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { validateConfig } from '@pvc/config';
import { mutate } from '@pvc/config/testing';
import { createExec, createLogger, realClock, withTempDir } from '@pvc/runtime';
import { connectZk } from '@pvc/zk';
import type { ZkClient } from '@pvc/zk';
import { createHealthMonitor } from '../../../apps/keepaliled/src/health/index.js';
import { waitUntil } from '../../support/wait.js';
import { ZkTestServer } from '../../support/zk-server.js';

const SRC_PLUGINS = fileURLToPath(new URL('../../../apps/keepaliled/src/health/plugins/', import.meta.url));
const SHIPPED = ['disk', 'dpkg', 'lbvt', 'load', 'nics', 'zkpr'];
const INTERVAL = 4000;
const TIMEOUT = 3000;
const N = '/nodes/localhost';

describe('health monitor against real ZooKeeper and the real host', { timeout: 120_000 }, () => {
  let server: ZkTestServer;
  let zk: ZkClient;
  /** Stops a monitor a failed assertion left running (its timers would keep the file alive). */
  let stopLeftover: (() => Promise<void>) | undefined;
  before(async () => {
    server = await ZkTestServer.start();
    zk = await connectZk({ hosts: ['127.0.0.1'], port: server.port, sessionTimeoutMs: 6000, clock: realClock });
    await zk.ensurePath(N);
    await zk.ensurePath(`${N}/monitoring_data/edac/message`);
  });
  after(async () => {
    await stopLeftover?.();
    await zk.close();
    await server.destroy();
  });

  it('writes every plugin and the health each run; a hung plugin stalls nothing', () =>
    withTempDir('health-e2e-', async (dir) => {
      for (const p of SHIPPED) await symlink(join(SRC_PLUGINS, `${p}.ts`), join(dir, `${p}.ts`));
      await writeFile(join(dir, 'hang.mjs'), `export default { name: 'hang', run: () => new Promise(() => {}) };`);
      const config = validateConfig(
        mutate(
          ['pvc.database.zookeeper.port', server.port],
          ['pvc.system.configuration.hypervisor.libvirt_uri', 'test:///default'],
          ['pvc.system.configuration.networking.upstream.device', 'lo'],
          ['pvc.system.configuration.networking.cluster.device', 'lo'],
          ['pvc.system.configuration.networking.storage.device', 'lo'],
          ['pvc.system.configuration.networking.bridge_device', 'lo'],
        ),
      );
      const logs: string[] = [];
      const logger = createLogger({ service: 'keepaliled', destination: { write: (l: string) => void logs.push(l) } });
      const monitor = createHealthMonitor({
        node: 'localhost', isCoordinator: true, config, zk, clock: realClock, logger, exec: createExec(),
        pluginDirectory: dir, intervalMs: INTERVAL, runTimeoutMs: TIMEOUT, pluginExtensions: ['.ts', '.mjs'],
      });
      // A keepalive-like 100 ms timer: the largest gap between its ticks shows whether anything blocked.
      let last = realClock.now();
      let maxGap = 0;
      const stopTicks = realClock.every(100, () => {
        const now = realClock.now();
        maxGap = Math.max(maxGap, now - last);
        last = now;
      });
      stopLeftover = () => monitor.stop();
      const t0 = realClock.now();
      await monitor.start();
      console.log(`start (load + setup + initial write): ${realClock.now() - t0} ms`);
      try {
        assert.equal(await zk.read(`${N}/monitoring_plugins`), 'dpkg hang lbvt load nics zkpr');
        assert.equal(await zk.read(`${N}/monitoring_data/edac`), undefined, 'stale plugin removed');
        // setup.sh installs smartmontools (ceph-base depends on it); this machine's disks are virtual.
        assert.equal(await zk.read(`${N}/monitoring_data/disk`), undefined, 'disk not loaded: no SMART disk here');
        assert.ok(
          logs.some((l) => /health plugin disk not loaded: (no disk with SMART|smartctl not installed)/.test(l)),
          `the disk plugin's reason for not loading is logged: ${logs.filter((l) => l.includes('disk')).join(' | ')}`,
        );
        // `runs` counts a run before its ZK write lands: wait until ZK holds the health of the last
        // completed run (the keys read below), not only for the counter.
        await waitUntil(async () => ({ runs: monitor.runs, health: monitor.summary().health, inZk: await zk.read(`${N}/monitoring_health`) }), {
          what: 'two health runs, the last one written to ZK',
          until: (s) => s.runs >= 2 && s.inZk === String(s.health),
          timeoutMs: 60_000,
          intervalMs: 100,
        });
        console.log(`two runs after ${realClock.now() - t0} ms; largest timer gap ${maxGap} ms`);
      } finally {
        stopTicks();
      }
      assert.ok(maxGap < 1000, `a 100 ms timer was delayed by ${maxGap} ms`);
      const read = async (p: string, k: string): Promise<string | undefined> => zk.read(`${N}/monitoring_data/${p}/${k}`);
      assert.match(String(await read('hang', 'message')), /^timed out after 3 s/);
      assert.equal(await read('hang', 'health_delta'), '10');
      for (const p of ['lbvt', 'zkpr', 'nics']) assert.equal(await read(p, 'health_delta'), '0', `${p}: ${await read(p, 'message')}`);
      let sum = 0;
      for (const p of ['dpkg', 'hang', 'lbvt', 'load', 'nics', 'zkpr']) {
        sum += Number(await read(p, 'health_delta'));
        assert.match(String(await read(p, 'runtime')), /^\d+\.\d\d$/);
        assert.ok(Number(await read(p, 'last_run')) >= Math.floor(t0 / 1000), `${p} last_run is this run's time`);
        JSON.parse(String(await read(p, 'data')));
      }
      assert.equal(await zk.read(`${N}/monitoring_health`), String(Math.max(0, 100 - sum)));
      assert.equal(monitor.summary().health, Math.max(0, 100 - sum));
      console.log(`dpkg: ${String(await read('dpkg', 'message'))}`);
      console.log(`health ${100 - sum}: ${monitor.summary().plugins.map((p) => `${p.name}=-${p.delta}`).join(' ')}`);

      stopLeftover = undefined;
      await monitor.stop();
      assert.equal(await zk.read(`${N}/monitoring_health`), 'None');
    }));
});
