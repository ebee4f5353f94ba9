// Standalone mode as safe as systemd mode, with real processes and a real Zookeeper: the children of
// a SIGKILLed supervisor stop by themselves (their IPC channel closes) within a bound, and a new
// supervisor then brings all four up without a crash loop; a socket still held by someone else is
// waited for (the holder named) before the children start; a service that was not spawned by the
// supervisor ignores a closing IPC channel.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { checkHealth, rpcClient, socketPath, SUPERVISOR, SUPERVISED_ENV, unixTarget, type ChildServiceInfo, type ServiceName } from '@pvc/rpc';
import { realClock } from '@pvc/runtime';
import { freePort } from '../../support/ports.js';
import { waitUntil } from '../../support/wait.js';
import { alive, ROOT, spawnSupervisor, supervisorConfig, type SupervisorProcess, tempDir, useZkTree } from './support.js';

const CHILDREN = ['netd', 'vmd', 'cephd', 'keepaliled'] as const;
/** The bound the children of a dead supervisor must be gone within. */
const EXIT_BOUND_MS = 10_000;

/** Gone: no such process, or a zombie nobody reaped yet (it runs nothing any more). */
function gone(pid: number): boolean {
  if (!alive(pid)) return true;
  try {
    return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

const sockets = (dir: string) => (s: ServiceName): string => socketPath(join(dir, 'run'), s);

async function allServing(sock: (s: ServiceName) => string): Promise<void> {
  for (const c of CHILDREN) {
    await waitUntil(() => checkHealth(unixTarget(sock(c)), '', { deadlineMs: 500 }), { what: `${c} SERVING`, timeoutMs: 60_000, intervalMs: 100, until: (h) => h === 'SERVING' });
  }
}

async function listServices(sock: (s: ServiceName) => string): Promise<Record<string, ChildServiceInfo>> {
  const sv = rpcClient(unixTarget(sock('supervisor')), SUPERVISOR);
  try {
    return Object.fromEntries((await sv.listServices({}, { deadlineMs: 2000 })).services.map((x) => [x.name, x]));
  } finally {
    sv.close();
  }
}

/** netd started by hand from source, with an IPC channel to the test; `supervised` sets PVC_SUPERVISED=1. */
async function startNetd(supervised: boolean, zkPort: number, dir?: string) {
  const tmp = dir === undefined ? tempDir(`pvc-ipc-${supervised ? 'sup' : 'hand'}-`) : { dir, remove: () => undefined };
  const cfg = supervisorConfig(tmp.dir, zkPort, await freePort());
  const env = { ...process.env, ...(supervised && { [SUPERVISED_ENV]: '1' }) };
  if (!supervised) delete env[SUPERVISED_ENV];
  const main = join(ROOT, 'apps', 'netd', 'src', 'main.ts');
  const child = spawn(process.execPath, [...process.execArgv, main, '--config', cfg], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'], env });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { tmp, child, exited, out: () => out, target: unixTarget(sockets(tmp.dir)('netd')) };
}

/** The children's final "<svc> stopped" lines. */
const stoppedLines = (s: SupervisorProcess): Record<string, unknown>[] => s.lines().filter((l) => CHILDREN.some((c) => l.msg === `${c} stopped`));

/** Log lines of the children (they share the supervisor's stdout) with this message. */
const childLines = (s: SupervisorProcess, msg: string): Record<string, unknown>[] => s.lines().filter((l) => l.msg === msg);

describe('supervisor, standalone: no orphans, no stale-socket crash loop (real Zookeeper)', () => {
  const tree = useZkTree();

  test('SIGKILLed supervisor: every child stops within 10 s; a new supervisor brings all four up without a crash loop', { timeout: 240_000 }, async () => {
    const tmp = tempDir('pvc-sup-orphans-');
    const cfg = supervisorConfig(tmp.dir, tree.server.port, await freePort());
    const sock = sockets(tmp.dir);
    const procs: SupervisorProcess[] = [];
    const pids = new Set<number>();
    try {
      const first = spawnSupervisor(cfg, ['--external-services', '--zk-timeout', '10']);
      procs.push(first);
      await allServing(sock);
      const before1 = await listServices(sock);
      for (const c of CHILDREN) pids.add(before1[c]?.pid ?? 0);
      assert.ok(![...pids].includes(0), JSON.stringify(before1));

      first.child.kill('SIGKILL');
      await first.exited;
      const t0 = realClock.now();
      const exitMs: Record<string, number> = {};
      await waitUntil(() => {
        for (const c of CHILDREN) if (exitMs[c] === undefined && gone(before1[c]?.pid ?? 0)) exitMs[c] = realClock.now() - t0;
        return Object.keys(exitMs).length === CHILDREN.length;
      }, { what: 'every child of the SIGKILLed supervisor to exit', timeoutMs: EXIT_BOUND_MS, intervalMs: 10 });
      const slowest = Math.max(...Object.values(exitMs));
      console.log(`children of a SIGKILLed supervisor exited after ${slowest} ms (${CHILDREN.map((c) => `${c} ${exitMs[c]} ms`).join(', ')}; bound ${EXIT_BOUND_MS} ms)`);
      assert.ok(slowest < EXIT_BOUND_MS);
      // Each stopped through its normal graceful path, saying why (the lines come through the pipe).
      await waitUntil(() => childLines(first, 'supervisor gone: stopping').map((l) => l.service), {
        what: 'four "supervisor gone: stopping" lines', until: (s) => s.length === 4,
      });
      const stopped = await waitUntil(() => stoppedLines(first), { what: 'four "<svc> stopped" lines', until: (s) => s.length === 4 });
      assert.deepEqual(stopped.map((l) => l.reason), ['supervisor gone', 'supervisor gone', 'supervisor gone', 'supervisor gone']);
      assert.deepEqual(childLines(first, 'supervisor gone: stopping').map((l) => l.service).sort(), [...CHILDREN].sort());

      // A new supervisor: all four come up first time, no failure, no crash loop.
      const second = spawnSupervisor(cfg, ['--external-services', '--zk-timeout', '10']);
      procs.push(second);
      await allServing(sock);
      const now = await listServices(sock);
      for (const c of CHILDREN) {
        assert.equal(now[c]?.state, 'running', JSON.stringify(now));
        assert.equal(now[c]?.restarts, 0, `${c} was restarted: ${JSON.stringify(now[c])}`);
        pids.add(now[c]?.pid ?? 0);
      }
      const failures = second.lines().filter((l) => l.msg === 'cannot start the local gRPC server' || (typeof l.msg === 'string' && l.msg.endsWith('crash-looping')) || l.reason === 'child failed');
      assert.deepEqual(failures, []);
      second.child.kill('SIGTERM');
      assert.equal(await second.exited, 0, second.output().slice(-3000));
      for (const pid of pids) assert.ok(gone(pid), `child ${pid} left running`);
    } finally {
      for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
      for (const pid of pids) if (pid > 0 && alive(pid)) process.kill(pid, 'SIGKILL');
      tmp.remove();
    }
  });

  test('a child socket held by another process: the supervisor names the holder and starts the children once it is released', { timeout: 180_000 }, async () => {
    const tmp = tempDir('pvc-sup-held-');
    const cfg = supervisorConfig(tmp.dir, tree.server.port, await freePort());
    const sock = sockets(tmp.dir);
    const holder = createServer();
    let sup: SupervisorProcess | undefined;
    const pids = new Set<number>();
    try {
      mkdirSync(join(tmp.dir, 'run', 'sockets'), { recursive: true });
      await new Promise<void>((r) => holder.listen(sock('vmd'), r));
      sup = spawnSupervisor(cfg, ['--external-services', '--zk-timeout', '10']);
      const s = sup;
      const waiting = await waitUntil(() => s.lines().find((l) => typeof l.msg === 'string' && l.msg.startsWith('sockets of a previous generation are still held')), {
        what: 'the "still held" warning', timeoutMs: 60_000,
      });
      assert.deepEqual(waiting?.held, [{ child: 'vmd', socket: sock('vmd'), pids: [process.pid] }]);
      assert.deepEqual((await listServices(sock)).vmd?.pid, 0, 'nothing spawned while the socket is held');
      await new Promise<void>((r) => holder.close(() => r()));
      const released = await waitUntil(() => s.lines().find((l) => l.msg === 'sockets of the previous generation released'), { what: 'the release line' });
      console.log(`supervisor waited ${String(released?.waitedMs)} ms for the held vmd socket`);
      await allServing(sock);
      const now = await listServices(sock);
      for (const c of CHILDREN) {
        assert.equal(now[c]?.restarts, 0, `${c}: ${JSON.stringify(now[c])}`);
        pids.add(now[c]?.pid ?? 0);
      }
      s.child.kill('SIGTERM');
      assert.equal(await s.exited, 0, s.output().slice(-3000));
    } finally {
      holder.close();
      if (sup && sup.child.exitCode === null && sup.child.signalCode === null) sup.child.kill('SIGKILL');
      for (const pid of pids) if (pid > 0 && alive(pid)) process.kill(pid, 'SIGKILL');
      tmp.remove();
    }
  });

  test('serviceMain: a closing IPC channel stops a service only when the supervisor spawned it (PVC_SUPERVISED=1)', { timeout: 120_000 }, async () => {
    const sup = await startNetd(true, tree.server.port);
    const hand = await startNetd(false, tree.server.port);
    try {
      for (const p of [sup, hand]) {
        await waitUntil(() => checkHealth(p.target, '', { deadlineMs: 500 }), { what: 'netd SERVING', timeoutMs: 60_000, intervalMs: 100, until: (h) => h === 'SERVING' });
      }
      sup.child.disconnect();
      hand.child.disconnect();
      assert.equal(await sup.exited, 0, sup.out().slice(-3000));
      // 'exit' can come before the last stdout chunk is read: wait for the line itself.
      await waitUntil(() => sup.out().includes('"msg":"supervisor gone: stopping"'), { what: 'the "supervisor gone" line' });
      // Both channels closed at the same moment; the supervised one has stopped by now, the other runs on.
      assert.equal(hand.child.exitCode, null);
      assert.equal(await checkHealth(hand.target, '', { deadlineMs: 2000 }), 'SERVING');
      assert.doesNotMatch(hand.out(), /supervisor gone/);
      hand.child.kill('SIGTERM');
      assert.equal(await hand.exited, 0, hand.out().slice(-3000));
    } finally {
      for (const p of [sup, hand]) {
        if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
        p.tmp.remove();
      }
    }
  });

  test('a service whose socket is in use exits 1 naming the socket and the pid holding it', { timeout: 120_000 }, async () => {
    const first = await startNetd(false, tree.server.port);
    try {
      await waitUntil(() => checkHealth(first.target, '', { deadlineMs: 500 }), { what: 'netd SERVING', timeoutMs: 60_000, intervalMs: 100, until: (h) => h === 'SERVING' });
      const second = await startNetd(false, tree.server.port, first.tmp.dir);
      assert.equal(await second.exited, 1, second.out().slice(-3000));
      const path = socketPath(join(first.tmp.dir, 'run'), 'netd');
      const line = `"msg":"cannot start the local gRPC server: ${path} is held by netd pid ${first.child.pid}"`;
      await waitUntil(() => second.out().includes(line), { what: `${line} in the output of the second netd` });
      first.child.kill('SIGTERM');
      assert.equal(await first.exited, 0);
    } finally {
      if (first.child.exitCode === null && first.child.signalCode === null) first.child.kill('SIGKILL');
      first.tmp.remove();
    }
  });
});
