// The Zookeeper readiness probe against a real server; the supervisor in systemd mode (no
// children, services reported external); and bring-up starting again from the top while Zookeeper
// is down, registering as soon as it is up (real processes, real Zookeeper).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { rpcClient, socketPath, SUPERVISOR, unixTarget } from '@pvc/rpc';
import { paths } from '@pvc/zk';
import { zookeeperRuok } from '../../../apps/supervisor/src/host/system-services.js';
import { waitFor } from '../../cluster/harness/index.js';
import { freePort } from '../../support/ports.js';
import { spawnSupervisor, supervisorConfig, tempDir, useZkTree, zkClient } from './support.js';

describe('supervisor modes and Zookeeper availability (real Zookeeper)', () => {
  const tree = useZkTree();

  test('ZK readiness probe: imok from a running server; a clear reason from a closed port', async () => {
    assert.deepEqual(await zookeeperRuok('127.0.0.1', tree.server.port), { ready: true, detail: 'imok' });
    const closed = await freePort();
    const r = await zookeeperRuok('127.0.0.1', closed);
    assert.equal(r.ready, false);
    assert.match(r.detail, new RegExp(`127\\.0\\.0\\.1:${closed}: connect ECONNREFUSED`));
  });

  test('systemd mode: registers, launches nothing, reports the services external, writes shutdown → stop', { timeout: 60_000 }, async () => {
    const tmp = tempDir('pvc-sup-sd-');
    const sup = spawnSupervisor(supervisorConfig(tmp.dir, tree.server.port, await freePort(), [['pvc.node', 'hv2']]), ['--mode', 'systemd']);
    try {
      const state = paths.node('hv2').daemonState;
      await waitFor('hv2 init', 30_000, async () => ((await tree.client.read(state)) === 'init' ? true : undefined), 20);
      const sv = rpcClient(unixTarget(socketPath(join(tmp.dir, 'run'), 'supervisor')), SUPERVISOR);
      try {
        const list = await waitFor('ListServices', 10_000, async () => (await sv.listServices({}, { deadlineMs: 1000 })).services, 50);
        assert.deepEqual(list.map((s) => [s.name, s.state, s.pid]), [['netd', 'external', 0], ['vmd', 'external', 0], ['cephd', 'external', 0], ['keepaliled', 'external', 0]]);
      } finally {
        sv.close();
      }
      assert.ok(!sup.lines().some((l) => l.msg === 'services launched'));
      sup.child.kill('SIGTERM');
      assert.equal(await sup.exited, 0, sup.output().slice(-2000));
      assert.equal(await tree.client.read(state), 'stop');
    } finally {
      if (sup.child.exitCode === null) sup.child.kill('SIGKILL');
      tmp.remove();
    }
  });

  test('Zookeeper gone while running: SIGTERM stops everything within 10 s, saying what was not written', { timeout: 90_000 }, async () => {
    const tmp = tempDir('pvc-sup-zkgone-');
    const sup = spawnSupervisor(supervisorConfig(tmp.dir, tree.server.port, await freePort(), [['pvc.node', 'hv4']]), ['--external-services']);
    try {
      await waitFor('hv4 run', 30_000, async () => ((await tree.client.read(paths.node('hv4').daemonState)) === 'run' ? true : undefined), 50);
      await tree.server.stop();
      await waitFor('the supervisor noticed', 15_000, async () => (sup.lines().some((l) => /zk connection lost|session suspended/.test(String(l.msg))) ? true : undefined), 50);
      const t0 = performance.now();
      sup.child.kill('SIGTERM');
      assert.equal(await sup.exited, 0, sup.output().slice(-2000));
      const ms = performance.now() - t0;
      // It took 23 s: each shutdown write (daemon states, keepaliled's health) waited out its deadline.
      assert.ok(ms < 10_000, `exited ${ms.toFixed(0)} ms after SIGTERM`);
      assert.ok(sup.lines().some((l) => l.msg === 'could not write daemon state stop: no ZK session'), sup.output().slice(-2000));
    } finally {
      if (sup.child.exitCode === null) sup.child.kill('SIGKILL');
      await tree.server.start();
      tmp.remove();
    }
  });

  test('Zookeeper down: gives up after --zk-timeout, starts again from the top, registers once it is up', { timeout: 90_000 }, async () => {
    const tmp = tempDir('pvc-sup-zk-');
    await tree.server.stop();
    const sup = spawnSupervisor(supervisorConfig(tmp.dir, tree.server.port, await freePort(), [['pvc.node', 'hv3']]), ['--zk-timeout', '1']);
    try {
      await waitFor('two restarts from the top', 30_000, async () =>
        sup.lines().filter((l) => l.msg === 'bring-up failed: starting again from the top').length >= 2 ? true : undefined, 50);
      const restart = sup.lines().find((l) => l.msg === 'bring-up failed: starting again from the top');
      assert.equal(restart?.code, 'OPERATION_TIMEOUT', JSON.stringify(restart));
      await tree.server.start();
      const c = await zkClient(tree.server.port);
      try {
        await waitFor('hv3 init', 30_000, async () => ((await c.read(paths.node('hv3').daemonState)) === 'init' ? true : undefined), 50).catch((err: unknown) => {
          throw new Error(`${String(err)}\nsupervisor output (last 4000 chars):\n${sup.output().slice(-4000)}`);
        });
      } finally {
        await c.close();
      }
      sup.child.kill('SIGTERM');
      assert.equal(await sup.exited, 0, sup.output().slice(-2000));
    } finally {
      if (sup.child.exitCode === null) sup.child.kill('SIGKILL');
      await tree.server.start();
      tmp.remove();
    }
  });
});
