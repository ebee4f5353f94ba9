// The real supervisor, standalone, against a real Zookeeper: registration in one transaction, the
// four services as children, restart of a SIGKILLed child (the others untouched), SIGHUP log
// reopen, ordered stop with daemon state shutdown → stop, and a malformed config.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { checkHealth, rpcClient, socketPath, SUPERVISOR, unixTarget, type ChildServiceInfo } from '@pvc/rpc';
import { realClock } from '@pvc/runtime';
import { newNodeObject, paths } from '@pvc/zk';
import { waitFor } from '../../cluster/harness/index.js';
import { freePort } from '../../support/ports.js';
import { alive, spawnSupervisor, SUPERVISOR_MAIN, supervisorConfig, type SupervisorProcess, tempDir, useZkTree } from './support.js';

const CHILDREN = ['netd', 'vmd', 'cephd', 'keepaliled'];

describe('supervisor, standalone, real Zookeeper', () => {
  const tree = useZkTree();

  test('registers, runs the four services, restarts a killed one, reopens its log, stops in order', { timeout: 180_000 }, async () => {
    const tmp = tempDir('pvc-sup-');
    const cfg = supervisorConfig(tmp.dir, tree.server.port, await freePort());
    const run = (dir: string) => unixTarget(socketPath(join(tmp.dir, 'run'), dir as 'vmd'));
    const states: string[] = [];
    const unwatch = tree.client.watchData(paths.node('hv1').daemonState, (v) => void (v && states.push(v.data)));
    let sup: SupervisorProcess | undefined;
    const pids = new Set<number>();
    try {
      sup = spawnSupervisor(cfg, ['--external-services', '--zk-timeout', '10']);
      const s = sup;
      await waitFor('daemon state init', 30_000, async () => (states.includes('init') ? true : undefined), 10);
      const initMs = realClock.now() - s.startedAt;
      // The log line travels through the child's stdout pipe: it may arrive after the ZK write is seen.
      const registered = await waitFor('the registration log line', 10_000, async () => s.lines().find((l) => l.msg === 'node registered: daemon state init'), 20);
      console.log(`supervisor process start → daemon state init: ${initMs} ms (supervisor's own bring-up: ${String(registered?.elapsedMs)} ms)`);
      assert.equal(registered?.registration, 'created');

      // The whole node object, created in one transaction: every key has the same creation zxid.
      const expected = newNodeObject({ name: 'hv1', daemonMode: 'hypervisor', nowMs: 0, staticData: '', pvcVersion: '', ipmi: { hostname: '', username: '', password: '' } });
      const root = paths.node('hv1').root;
      const rootStat = await tree.client.exists(root);
      for (const [rel] of expected.entries) {
        const st = await tree.client.exists(rel === '' ? root : `${root}/${rel}`);
        assert.ok(st, `${rel} missing`);
        assert.equal(st.czxid, rootStat?.czxid, `${rel} not created in the node's transaction`);
      }
      assert.equal(await tree.client.read(paths.node('hv1').routerState), 'client');
      assert.equal(await tree.client.read(paths.node('hv1').ipmiPassword), 'Passw0rd', 'stored as the original does');
      assert.match((await tree.client.read(paths.node('hv1').staticData)) ?? '', /^\d+ \S+ \S+ \S+$/);

      // All four services come up and serve health on their sockets.
      for (const c of CHILDREN) {
        await waitFor(`${c} SERVING`, 60_000, async () => ((await checkHealth(run(c), '', { deadlineMs: 500 })) === 'SERVING' ? true : undefined), 100);
      }
      const sv = rpcClient(unixTarget(socketPath(join(tmp.dir, 'run'), 'supervisor')), SUPERVISOR);
      const list = async (): Promise<Record<string, ChildServiceInfo>> =>
        Object.fromEntries((await sv.listServices({}, { deadlineMs: 2000 })).services.map((x) => [x.name, x]));
      try {
        const before1 = await list();
        for (const c of CHILDREN) {
          assert.equal(before1[c]?.state, 'running', JSON.stringify(before1));
          pids.add(before1[c]?.pid ?? 0);
        }

        // SIGKILL vmd: restarted with a new pid; the others keep theirs.
        const vmdPid = before1.vmd?.pid ?? 0;
        process.kill(vmdPid, 'SIGKILL');
        const after1 = await waitFor('vmd restarted', 30_000, async () => {
          const l = await list();
          return l.vmd?.restarts === 1 && l.vmd.state === 'running' ? l : undefined;
        }, 50);
        pids.add(after1.vmd?.pid ?? 0);
        assert.notEqual(after1.vmd?.pid, vmdPid);
        assert.equal(after1.vmd?.lastExit, 'signal SIGKILL');
        for (const c of ['netd', 'cephd', 'keepaliled']) assert.equal(after1[c]?.pid, before1[c]?.pid, `${c} was touched`);
        await waitFor('vmd SERVING again', 60_000, async () => ((await checkHealth(run('vmd'), '', { deadlineMs: 500 })) === 'SERVING' ? true : undefined), 100);
      } finally {
        sv.close();
      }

      // SIGHUP: the log file is reopened (logrotate renamed it).
      const log = join(tmp.dir, 'log', 'supervisor.log');
      assert.ok(existsSync(log));
      renameSync(log, `${log}.1`);
      s.child.kill('SIGHUP');
      await waitFor('new supervisor.log with the reopen line', 10_000, async () =>
        existsSync(log) && readFileSync(log, 'utf8').includes('SIGHUP: log file reopened') ? true : undefined, 50);
      assert.match(readFileSync(`${log}.1`, 'utf8'), /node registered/);

      // SIGTERM: daemon state shutdown, children stopped keepaliled → vmd → netd → cephd, then stop.
      s.child.kill('SIGTERM');
      assert.equal(await s.exited, 0, s.output().slice(-3000));
      await waitFor('daemon state stop', 10_000, async () => (states.at(-1) === 'stop' ? true : undefined), 20);
      assert.deepEqual(states.slice(states.indexOf('init')).filter((x) => x !== 'run'), ['init', 'shutdown', 'stop']);
      // 'exit' can come before the last stdout chunk is read: wait for the four lines themselves.
      const stoppedLines = (): unknown[] => s.lines().filter((l) => l.to === 'stopped' && l.reason === 'stopped by the supervisor');
      await waitFor('four "stopped by the supervisor" lines', 5_000, async () => (stoppedLines().length >= 4 ? true : undefined), 20);
      const stopped = s.lines().filter((l) => l.to === 'stopped' && l.reason === 'stopped by the supervisor').map((l) => l.child);
      assert.deepEqual(stopped, ['keepaliled', 'vmd', 'netd', 'cephd']);
      for (const pid of pids) assert.equal(alive(pid), false, `child ${pid} left running`);
      assert.doesNotMatch(s.output() + readFileSync(log, 'utf8'), /Passw0rd/, 'a password reached a log');
    } finally {
      unwatch();
      if (sup && sup.child.exitCode === null) sup.child.kill('SIGKILL');
      for (const pid of pids) if (pid > 0 && alive(pid)) process.kill(pid, 'SIGKILL');
      tmp.remove();
    }
  });

  test('a malformed config exits 2 with a clear message and starts nothing', () => {
    const tmp = tempDir('pvc-sup-bad-');
    try {
      const cfg = supervisorConfig(tmp.dir, tree.server.port, 623, [['pvc.system.fencing.intervals.keepalive_interval', 'often']]);
      const r = spawnSync(process.execPath, [...process.execArgv, SUPERVISOR_MAIN, '--config', cfg], { encoding: 'utf8', timeout: 30_000 });
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, /supervisor: .*pvc\.system\.fencing\.intervals\.keepalive_interval: expected an integer ≥ 1, got "often"/);
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'a stack trace was printed');
      assert.equal(existsSync(join(tmp.dir, 'run')), false, 'something was started');
      const bad = spawnSync(process.execPath, [...process.execArgv, SUPERVISOR_MAIN, '--config', cfg, '--mode', 'cluster'], { encoding: 'utf8', timeout: 30_000 });
      assert.equal(bad.status, 2);
      assert.match(bad.stderr, /--mode: expected standalone or systemd, got "cluster"/);
    } finally {
      tmp.remove();
    }
  });
});
