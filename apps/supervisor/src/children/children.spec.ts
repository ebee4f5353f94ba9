import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger, VirtualClock } from '@pvc/runtime';
import { FakeProcessPort } from '../host/fake-process.js';
import { DEFAULT_RESTART_POLICY, restartDelay, restartPolicyFor, type RestartPolicy } from './backoff.js';
import { ChildGroup, CHILD_SERVICES } from './group.js';
import { childSpecs } from './launch.js';

function setup(policy: RestartPolicy = DEFAULT_RESTART_POLICY) {
  const clock = new VirtualClock(0);
  const processes = new FakeProcessPort();
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ service: 'supervisor', dates: false, destination: { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) } });
  const specs = CHILD_SERVICES.map((name) => ({ name, command: 'node', args: [`${name}.js`] }));
  const group = new ChildGroup(specs, { processes, clock, logger, policy });
  return { clock, processes, lines, group };
}
const state = (g: ChildGroup, n: string) => g.snapshots().find((s) => s.name === n);

test('restartDelay: 0.5 s doubling, capped at 30 s', () => {
  assert.deepEqual([1, 2, 3, 4, 5, 6, 7, 8].map((n) => restartDelay(DEFAULT_RESTART_POLICY, n)), [500, 1000, 2000, 4000, 8000, 16000, 30000, 30000]);
});

test('fence-safe cap: no restart delay exceeds keepalive_interval × fence_intervals / 2; fencing off or a wide window keeps the normal policy', () => {
  const delays = (ki: number, fi: number): number[] => {
    const p = restartPolicyFor(DEFAULT_RESTART_POLICY, { keepalive_interval: ki, fence_intervals: fi });
    return [1, 2, 3, 4, 5, 6, 7, 8].map((n) => restartDelay(p, n));
  };
  assert.deepEqual(delays(5, 6), [500, 1000, 2000, 4000, 8000, 15000, 15000, 15000], 'the sample: 30 s window → 15 s');
  assert.deepEqual(delays(1, 3), [500, 1000, 1500, 1500, 1500, 1500, 1500, 1500], '3 s window → 1.5 s');
  assert.deepEqual(delays(1, 1), [500, 500, 500, 500, 500, 500, 500, 500], '1 s window → 0.5 s');
  assert.deepEqual(delays(1, 0), [500, 1000, 2000, 4000, 8000, 16000, 30000, 30000], 'fencing off: the normal cap');
  assert.deepEqual(delays(10, 10), [500, 1000, 2000, 4000, 8000, 16000, 30000, 30000], '100 s window: 50 s is above the normal cap');
  assert.equal(restartPolicyFor(DEFAULT_RESTART_POLICY, { keepalive_interval: 1, fence_intervals: 0 }), DEFAULT_RESTART_POLICY);
  for (const ki of [1, 2, 5, 10]) {
    for (const fi of [1, 2, 3, 6, 12]) {
      const p = restartPolicyFor(DEFAULT_RESTART_POLICY, { keepalive_interval: ki, fence_intervals: fi });
      for (let n = 1; n <= 40; n++) assert.ok(restartDelay(p, n) <= (ki * fi * 1000) / 2, `${ki}×${fi}, restart ${n}`);
      assert.deepEqual({ ...p, maxDelayMs: 0, initialDelayMs: 0 }, { ...DEFAULT_RESTART_POLICY, maxDelayMs: 0, initialDelayMs: 0 }, 'only the delays change');
    }
  }
});

test('keepaliled crashing again and again (keepalive 1 s × 3): restarted within 1.5 s every time, the crash loop still reported', async () => {
  const policy = restartPolicyFor(DEFAULT_RESTART_POLICY, { keepalive_interval: 1, fence_intervals: 3 });
  const { clock, processes, group, lines } = setup(policy);
  group.startAll();
  const delays: number[] = [];
  for (let i = 0; i < 8; i++) {
    await clock.advance(0);
    processes.latest('keepaliled').exit(1);
    await clock.advance(0);
    const t0 = clock.now();
    while (processes.latest('keepaliled').ended) await clock.advance(100);
    delays.push(clock.now() - t0);
  }
  assert.deepEqual(delays, [500, 1000, 1500, 1500, 1500, 1500, 1500, 1500]);
  assert.equal(state(group, 'keepaliled')?.state, 'crash-loop');
  const loop = lines.filter((l) => l.level === 50 && l.msg === 'keepaliled is crash-looping');
  assert.deepEqual(loop.map((l) => l.restartInMs), [1500, 1500, 1500, 1500], 'reported from the 5th crash on, with the capped delay');
  await group.stopAll();
});

test('a crashed child is restarted after its backoff; the others keep their processes', async () => {
  const { clock, processes, group } = setup();
  group.startAll();
  await clock.advance(0);
  const pids = Object.fromEntries(group.snapshots().map((s) => [s.name, s.pid]));
  processes.latest('vmd').exit(null, 'SIGKILL');
  await clock.advance(0);
  assert.deepEqual(state(group, 'vmd'), { name: 'vmd', state: 'backoff', pid: pids.vmd, restarts: 0, lastExit: 'signal SIGKILL' });
  await clock.advance(499);
  assert.equal(processes.children.filter((c) => c.spec.name === 'vmd').length, 1, 'not before 500 ms');
  await clock.advance(1);
  const vmd = state(group, 'vmd');
  assert.equal(vmd?.state, 'running');
  assert.equal(vmd?.restarts, 1);
  assert.notEqual(vmd?.pid, pids.vmd);
  for (const n of ['netd', 'cephd', 'keepaliled']) assert.equal(state(group, n)?.pid, pids[n], `${n} untouched`);
  await group.stopAll();
});

test('5 crashes within 60 s is a crash loop: logged at error, reported, still restarted; over after a stable minute', async () => {
  const { clock, processes, group, lines } = setup();
  group.startAll();
  const delays: number[] = [];
  for (let i = 0; i < 5; i++) {
    await clock.advance(0);
    processes.latest('netd').exit(1);
    await clock.advance(0);
    const t0 = clock.now();
    while (processes.latest('netd').ended) await clock.advance(100);
    delays.push(clock.now() - t0);
  }
  assert.deepEqual(delays, [500, 1000, 2000, 4000, 8000]);
  assert.equal(state(group, 'netd')?.state, 'crash-loop', 'the loop stays visible while the child is up again');
  assert.equal(state(group, 'netd')?.lastExit, 'exit 1');
  const errors = lines.filter((l) => l.level === 50 && l.child === 'netd');
  assert.ok(errors.some((l) => l.msg === 'netd is crash-looping' && l.crashesInWindow === 5), JSON.stringify(errors));
  await clock.advance(60_000);
  assert.equal(state(group, 'netd')?.state, 'running');
  processes.latest('netd').exit(1);
  await clock.advance(0);
  assert.equal(state(group, 'netd')?.state, 'backoff', 'after a stable run the count starts over');
  await clock.advance(500);
  assert.equal(state(group, 'netd')?.state, 'running');
  await group.stopAll();
});

test('stop order: keepaliled, vmd, netd, cephd, each waited for; SIGKILL after the bound when SIGTERM is ignored', async () => {
  const { clock, processes, group } = setup();
  group.startAll();
  await clock.advance(0);
  processes.ignoreTerm.add('vmd');
  processes.log.length = 0;
  const stopping = group.stopAll();
  await clock.advance(0);
  assert.deepEqual(processes.log, ['kill keepaliled SIGTERM', 'exit keepaliled SIGTERM', 'kill vmd SIGTERM']);
  await clock.advance(DEFAULT_RESTART_POLICY.stopTimeoutMs);
  await stopping;
  assert.deepEqual(processes.log.slice(3), ['kill vmd SIGKILL', 'exit vmd SIGKILL', 'kill netd SIGTERM', 'exit netd SIGTERM', 'kill cephd SIGTERM', 'exit cephd SIGTERM']);
  assert.ok(group.snapshots().every((s) => s.state === 'stopped'));
  await clock.advance(120_000);
  assert.equal(processes.children.length, 4, 'nothing restarted after stop');
});

test('a child exiting 0 by itself is not restarted; one that cannot start is retried with backoff', async () => {
  const { clock, processes, group } = setup();
  processes.failSpawn.set('cephd', 2);
  group.startAll();
  await clock.advance(0);
  assert.equal(state(group, 'cephd')?.state, 'backoff');
  assert.match(state(group, 'cephd')?.lastExit ?? '', /failed to start: spawn ENOENT/);
  await clock.advance(1500);
  assert.equal(state(group, 'cephd')?.state, 'running');
  processes.latest('keepaliled').exit(0);
  await clock.advance(60_000);
  assert.equal(state(group, 'keepaliled')?.state, 'stopped');
  assert.equal(processes.children.filter((c) => c.spec.name === 'keepaliled').length, 1);
  await group.stopAll();
});

test('launch specs: same node binary and flags, the package main, --config', () => {
  const specs = childSpecs({
    execPath: '/usr/bin/node',
    execArgv: ['--conditions=development', '--import', 'tsx'],
    configPath: '/etc/pvc/pvcnoded.yaml',
    resolve: (s) => `file:///repo/${s.replace('@pvc/', 'apps/')}/src/main.ts`,
  });
  assert.deepEqual(specs.map((s) => [s.name, s.command, ...s.args].join(' ')), CHILD_SERVICES.map(
    (n) => `${n} /usr/bin/node --conditions=development --import tsx /repo/apps/${n}/src/main.ts --config /etc/pvc/pvcnoded.yaml`,
  ));
});
