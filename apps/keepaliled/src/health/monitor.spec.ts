import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createLogger, FakeExec, flushMicrotasks, VirtualClock, withTempDir } from '@pvc/runtime';
import { FakeZkServer } from '@pvc/zk/testing';
import type { ZkClient } from '@pvc/zk';
import { sampleConfig } from './fake-context.js';
import { createHealthMonitor } from './monitor.js';
import type { HealthMonitor } from './monitor.js';

const N = '/nodes/hv1';
const INTERVAL = 15_000;
const TIMEOUT = 5_000;

/** Plugin files: each keeps counters on globalThis so the test can see how often it ran. */
const PLUGINS: Record<string, string> = {
  'a-ok.mjs': `const c = (globalThis.__h ??= {}); export default { name: 'ok', run: () => { c.ok = (c.ok ?? 0) + 1; return { delta: 5, message: 'fine', data: { n: c.ok } }; }, cleanup: () => { c.okClean = true; } };`,
  'b-hang.mjs': `const c = (globalThis.__h ??= {}); export default { name: 'hang', run: () => { c.hang = (c.hang ?? 0) + 1; return new Promise((r) => { c.release = r; }); } };`,
  'c-throw.mjs': `export default { name: 'boom', run: () => { throw new Error('sensor exploded'); } };`,
  'd-bad.mjs': `export default { name: 'bad', run: () => ({ delta: -7, message: 42, data: 'x' }) };`,
  'e-nan.mjs': `export default { name: 'nan', run: async () => ({ delta: 'lots', message: 'two\\nlines' }) };`,
  'f-skip.mjs': `export default { name: 'skip', setup: () => 'no hardware here', run: () => ({ delta: 99, message: '' }) };`,
  'g-syntax.mjs': `export default { name: 'syn', run: ( };`,
  'h-norun.mjs': `export default { name: 'norun' };`,
  'i-dup.mjs': `export default { name: 'ok', run: () => ({ delta: 0, message: 'dup' }) };`,
  'x.spec.mjs': `throw new Error('test files are not plugins');`,
  'README.txt': 'not a plugin',
};

interface Rig {
  clock: VirtualClock;
  server: FakeZkServer;
  zk: ZkClient;
  monitor: HealthMonitor;
  logs: string[];
  read(path: string): Promise<string | undefined>;
}

async function rig(dir: string, files: Record<string, string>): Promise<Rig> {
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  (globalThis as { __h?: unknown }).__h = {};
  const clock = new VirtualClock(1_700_000_000_000);
  const server = new FakeZkServer({ clock });
  const zk = await server.connect();
  await zk.ensurePath(`${N}/monitoring_data/retired/message`);
  const logs: string[] = [];
  const logger = createLogger({ service: 'keepaliled', destination: { write: (l: string) => void logs.push(l) } });
  const monitor = createHealthMonitor({
    node: 'hv1', isCoordinator: true, config: sampleConfig(), zk, clock, logger, exec: new FakeExec(),
    pluginDirectory: dir, intervalMs: INTERVAL, runTimeoutMs: TIMEOUT,
  });
  return { clock, server, zk, monitor, logs, read: (p) => zk.read(p) };
}

const counters = (): Record<string, unknown> => (globalThis as unknown as { __h: Record<string, unknown> }).__h;

describe('health monitor (virtual time, fake ZK)', () => {
  it('loads good plugins, reports bad files, initialises keys, runs at once and every interval', () =>
    withTempDir('health-mon-', async (dir) => {
      const r = await rig(dir, PLUGINS);
      await r.monitor.start();
      for (const f of ['g-syntax.mjs', 'h-norun.mjs', 'i-dup.mjs']) assert.ok(r.logs.some((l) => l.includes(f)), `${f} reported`);
      assert.ok(r.logs.some((l) => l.includes('skip not loaded: no hardware here')));
      assert.equal(await r.read(`${N}/monitoring_plugins`), 'ok hang boom bad nan');
      assert.equal(await r.read(`${N}/monitoring_data/retired`), undefined, 'stale plugin data removed');
      assert.equal(await r.read(`${N}/monitoring_data/ok`), 'ok');

      await r.clock.advance(0);
      assert.equal(counters()['ok'], 1, 'first run at once');
      assert.equal(r.monitor.runs, 0, 'the run waits for the hung plugin up to its timeout');
      await r.clock.advance(TIMEOUT);
      assert.equal(r.monitor.runs, 1);
      // 100 - (ok 5 + hang 10 + boom 10 + bad 0 + nan 10)
      assert.equal(await r.read(`${N}/monitoring_health`), '65');
      assert.equal(await r.read(`${N}/monitoring_data/hang/message`), 'timed out after 5 s');
      assert.equal(await r.read(`${N}/monitoring_data/hang/health_delta`), '10');
      assert.equal(await r.read(`${N}/monitoring_data/hang/runtime`), '5.00');
      assert.equal(await r.read(`${N}/monitoring_data/boom/message`), 'failed: sensor exploded');
      assert.equal(await r.read(`${N}/monitoring_data/bad/health_delta`), '0');
      assert.equal(await r.read(`${N}/monitoring_data/bad/message`), '42');
      assert.equal(await r.read(`${N}/monitoring_data/bad/data`), '{}');
      assert.equal(await r.read(`${N}/monitoring_data/nan/message`), 'two; lines');
      assert.equal(await r.read(`${N}/monitoring_data/ok/data`), '{"n":1}');
      assert.equal(await r.read(`${N}/monitoring_data/ok/last_run`), String(1_700_000_000));
      assert.ok(r.logs.some((l) => l.includes('negative delta -7 clamped to 0')));

      await r.clock.advance(INTERVAL - TIMEOUT);
      assert.equal(counters()['ok'], 2, 'second run one interval after the first started');
      assert.equal(counters()['hang'], 1, 'the hung plugin is not started again');
      assert.equal(r.monitor.runs, 2, 'the second run does not wait for the hung plugin');
      assert.match(String(await r.read(`${N}/monitoring_data/hang/message`)), /previous run still running/);
      (counters()['release'] as () => void)();
      await r.clock.advance(INTERVAL);
      assert.equal(counters()['hang'], 2, 'started again once its old run settled');

      const s = r.monitor.summary();
      assert.equal(s.health, 65);
      assert.deepEqual(s.plugins.map((p) => p.name), ['ok', 'hang', 'boom', 'bad', 'nan']);
      await r.clock.advance(TIMEOUT);
      await r.monitor.stop();
      assert.equal(counters()['okClean'], true, 'cleanup ran');
      assert.equal(await r.read(`${N}/monitoring_health`), 'None');
      assert.equal(r.monitor.summary().health, null);
      assert.equal(r.clock.pending(), 0, 'no timer left behind');
      await r.zk.close();
    }));

  it('a ZK write failure is logged and the loop goes on', () =>
    withTempDir('health-mon-', async (dir) => {
      const r = await rig(dir, { 'a-ok.mjs': PLUGINS['a-ok.mjs'] as string });
      await r.monitor.start();
      r.server.failNextWrite({ code: 'CONNECTION_LOSS' });
      await r.clock.advance(0);
      assert.equal(r.monitor.runs, 1);
      assert.equal(await r.read(`${N}/monitoring_health`), undefined);
      assert.ok(r.logs.some((l) => l.includes('health run write to ZK failed')));
      await r.clock.advance(INTERVAL);
      assert.equal(await r.read(`${N}/monitoring_health`), '95');
      await r.monitor.stop();
      await r.zk.close();
    }));

  it('stop during a hung run returns at once; an empty directory loads nothing and writes no health', () =>
    withTempDir('health-mon-', async (dir) => {
      const r = await rig(dir, { 'b-hang.mjs': PLUGINS['b-hang.mjs'] as string });
      await r.monitor.start();
      await r.clock.advance(1000);
      await r.monitor.stop();
      assert.equal(r.monitor.state, 'stopped');
      assert.equal(r.monitor.runs, 0);
      assert.equal(await r.read(`${N}/monitoring_health`), 'None');
      await r.zk.close();
    }).then(() =>
      withTempDir('health-empty-', async (dir) => {
        const r = await rig(dir, {});
        await r.monitor.start();
        await r.clock.advance(INTERVAL * 2);
        await flushMicrotasks();
        assert.equal(await r.read(`${N}/monitoring_plugins`), '');
        assert.ok(r.logs.some((l) => l.includes('no health plugins loaded')));
        await r.monitor.stop();
        await r.zk.close();
      }),
    ));
});
