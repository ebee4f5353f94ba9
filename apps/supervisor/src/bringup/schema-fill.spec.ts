import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLock, locks, newDomainObject, newNodeObject, paths, ReadLock, type ZkClient } from '@pvc/zk';
import { runSupervisor } from '../supervisor.js';
import { fakeWorld, testConfig } from '../testing.js';

const UUID = '0b6c3a5e-2f1d-4c7e-9a8b-1d2e3f4a5b6c';
const n = paths.node('hv4');
const vm = paths.domain(UUID);

type World = ReturnType<typeof fakeWorld>;

/** An initialised tree where the existing node hv4 lacks three keys and a VM lacks two. */
async function tree(w: World): Promise<ZkClient> {
  const c = await w.zkServer.connect();
  for (const p of [paths.schema.version, paths.nodes, paths.domains, paths.networks, paths.config.root]) await c.ensurePath(p);
  await c.set(paths.schema.version, '15');
  const node = newNodeObject({ name: 'hv4', daemonMode: 'hypervisor', nowMs: 1000, staticData: '1 k os arch', pvcVersion: '0.0.1', ipmi: { hostname: 'x', username: 'y', password: 'z' } });
  await c.createObject(node.root, node.entries);
  const dom = newDomainObject({ uuid: UUID, name: 'web1', xml: '<domain/>', node: 'hv4' });
  await c.createObject(dom.root, dom.entries);
  for (const p of [n.activeSchema, n.networkStats, n.memProv, vm.migrationMaxDowntime, vm.nodeLimit]) await c.delete(p);
  return c;
}

function world(timeoutMs?: number): World {
  const w = fakeWorld(testConfig(['pvc.node', 'hv4'], ['pvc.functions.enable_hypervisor', false]), { mode: 'systemd' });
  if (timeoutMs !== undefined) Object.assign(w.deps, { schemaLockTimeoutMs: timeoutMs });
  return w;
}

async function stop(w: World, run: Promise<void>): Promise<void> {
  w.requestShutdown('SIGTERM');
  await w.clock.advance(0);
  await run;
}

const msgs = (w: World): string[] => w.lines.map((l) => String(l.msg));

test('bring-up fills missing keys under the schema WriteLock, before registration, one log line per key', async () => {
  const w = world();
  const c = await tree(w);
  const run = runSupervisor(w.deps);
  await w.clock.advance(0);
  assert.equal(await c.read(vm.migrationMaxDowntime), '300');
  assert.equal(await c.read(vm.nodeLimit), '');
  assert.equal(await c.read(n.networkStats), '');
  assert.equal(await c.read(n.memProv), '');
  assert.equal(await c.read(n.activeSchema), '15', 'filled empty, then set to the cluster schema by registration (as the original copies it)');
  const filled = w.lines.filter((l) => String(l.msg).startsWith('filled missing key'));
  assert.deepEqual(filled.map((l) => l.key).sort(), [n.activeSchema, n.memProv, n.networkStats, vm.migrationMaxDowntime, vm.nodeLimit].sort());
  assert.ok(filled.every((l) => l.component === 'schema'));
  const m = msgs(w);
  assert.ok(m.indexOf('schema checked: 5 missing keys filled') < m.findIndex((x) => x.startsWith('node present in Zookeeper')), 'fill before registration');
  assert.deepEqual(await c.children(paths.schema.version), [], 'lock released');
  await stop(w, run);
  await c.close();
});

test('a Python ReadLock on /schema/version (left by a hot schema update) holds the fill and registration until released', async () => {
  const w = world();
  const c = await tree(w);
  await c.set(n.daemonState, 'stop');
  const reader = new ReadLock(c, paths.schema.version, { clock: w.clock });
  assert.ok(await reader.acquire());
  const run = runSupervisor(w.deps);
  await w.clock.advance(5_000);
  assert.equal(await c.exists(vm.migrationMaxDowntime), undefined, 'filled while the read lock was held');
  assert.equal(await c.read(n.daemonState), 'stop', 'registered while the read lock was held');
  assert.ok(!msgs(w).some((x) => x.startsWith('node present')));
  const waiting = await c.children(paths.schema.version);
  assert.equal(waiting.length, 2);
  assert.ok(waiting.some((x) => x.includes('__lock__')), 'the supervisor contends with a WriteLock');
  await reader.release();
  await w.clock.advance(0);
  assert.equal(await c.read(vm.migrationMaxDowntime), '300');
  assert.equal(await c.read(n.daemonState), 'init');
  await stop(w, run);
  await c.close();
});

test('a schema lock that stays taken: after the bound, a warning, no fill, registration goes on', async () => {
  const w = world(5_000);
  const c = await tree(w);
  const holder = createLock(c, locks.schemaMigrate, { clock: w.clock });
  assert.ok(await holder.acquire());
  const run = runSupervisor(w.deps);
  await w.clock.advance(4_000);
  assert.ok(!msgs(w).some((x) => x.startsWith('node present')));
  await w.clock.advance(1_500);
  const warn = w.lines.find((l) => l.level === 40 && l.component === 'schema');
  assert.match(String(warn?.msg), /schema lock \/schema\/version still taken after 5000 ms: missing keys are not filled/);
  assert.equal(await c.exists(vm.migrationMaxDowntime), undefined);
  assert.ok(msgs(w).some((x) => x.startsWith('node present')));
  assert.equal(await c.read(n.activeSchema), '15', 'registration still records the active schema');
  assert.equal((await c.children(paths.schema.version)).length, 1, 'our contender removed');
  await holder.release();
  await stop(w, run);
  await c.close();
});

test('an uninitialised tree: the schema lock is not taken (it would create /schema/version)', async () => {
  const w = world();
  const run = runSupervisor(w.deps);
  await w.clock.advance(0);
  assert.ok(w.lines.some((l) => l.code === 'CLUSTER_NOT_INITIALISED'));
  const c = await w.zkServer.connect();
  assert.equal(await c.exists(paths.schema.version), undefined);
  await stop(w, run);
  await c.close();
});

test('an empty /schema/version is not a schema: a clear error, retried', async () => {
  const w = world();
  const c = await w.zkServer.connect();
  for (const p of [paths.schema.version, paths.nodes]) await c.ensurePath(p);
  const run = runSupervisor(w.deps);
  await w.clock.advance(0);
  const err = w.lines.find((l) => l.code === 'CLUSTER_NOT_INITIALISED');
  assert.match(String(err?.err), /\/schema\/version holds no schema version/);
  await c.set(paths.schema.version, '15');
  await w.clock.advance(2_000);
  assert.equal(await c.read(n.daemonState), 'init');
  await stop(w, run);
  await c.close();
});
