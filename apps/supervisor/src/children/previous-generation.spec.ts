import { test } from 'node:test';
import assert from 'node:assert/strict';
import { socketPath } from '@pvc/rpc';
import { createLogger, VirtualClock } from '@pvc/runtime';
import { paths } from '@pvc/zk';
import { unixSocketInodes } from '../host/socket-holders.js';
import { runSupervisor } from '../supervisor.js';
import { FakeSocketHolders, fakeWorld, testConfig } from '../testing.js';
import { waitForSocketsReleased } from './previous-generation.js';

function setup() {
  const clock = new VirtualClock(0);
  const holders = new FakeSocketHolders();
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ service: 'supervisor', dates: false, destination: { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) } });
  const sockets = ['netd', 'vmd'].map((child) => ({ child, path: `/run/pvcd/sockets/${child}.sock` }));
  return { clock, holders, lines, sockets, deps: { holders, clock, logger, signal: new AbortController().signal } };
}

test('socket wait: nothing held → no wait, nothing logged', async () => {
  const { sockets, deps, lines } = setup();
  assert.deepEqual(await waitForSocketsReleased(sockets, deps), { released: true, waitedMs: 0, held: [] });
  assert.equal(lines.length, 0);
});

test('socket wait: a socket held by the previous generation is waited for until released, the holder named', async () => {
  const { sockets, deps, lines, holders, clock } = setup();
  holders.held.set('/run/pvcd/sockets/vmd.sock', [4242]);
  const wait = waitForSocketsReleased(sockets, deps);
  await clock.advance(2_000);
  holders.held.delete('/run/pvcd/sockets/vmd.sock');
  await clock.advance(100);
  assert.deepEqual(await wait, { released: true, waitedMs: 2_100, held: [] });
  assert.deepEqual(lines.find((l) => l.level === 40)?.held, [{ child: 'vmd', socket: '/run/pvcd/sockets/vmd.sock', pids: [4242] }]);
  assert.equal(lines.find((l) => l.msg === 'sockets of the previous generation released')?.waitedMs, 2_100);
});

test('socket wait: still held after the bound → an error naming socket and pid, and the wait ends', async () => {
  const { sockets, deps, lines, holders, clock } = setup();
  holders.held.set('/run/pvcd/sockets/netd.sock', [77]);
  holders.held.set('/run/pvcd/sockets/vmd.sock', []);
  let done = false;
  const wait = waitForSocketsReleased(sockets, deps).finally(() => (done = true));
  await clock.advance(9_900);
  assert.equal(done, false);
  await clock.advance(100);
  const r = await wait;
  assert.equal(r.released, false);
  assert.equal(r.waitedMs, 10_000);
  const errors = lines.filter((l) => l.level === 50).map((l) => l.msg);
  assert.deepEqual(errors, [
    'netd: socket /run/pvcd/sockets/netd.sock still held by pid 77 after 10000 ms: starting netd anyway (it fails until the socket is released)',
    'vmd: socket /run/pvcd/sockets/vmd.sock still held by a process that could not be named after 10000 ms: starting vmd anyway (it fails until the socket is released)',
  ]);
});

test('/proc/net/unix: the inodes bound to a path (listener and accepted connections), nothing else', () => {
  const listing = [
    'Num       RefCount Protocol Flags    Type St Inode Path',
    '0000000000000000: 00000002 00000000 00010000 0001 01 31337 /run/pvcd/sockets/vmd.sock',
    '0000000000000000: 00000003 00000000 00000000 0001 03 31340 /run/pvcd/sockets/vmd.sock',
    '0000000000000000: 00000003 00000000 00000000 0001 03 31341',
    '0000000000000000: 00000002 00000000 00010000 0001 01 31338 /run/pvcd/sockets/vmd.sock.old',
    '0000000000000000: 00000002 00000000 00010000 0001 01 31339 @/run/pvcd/sockets/vmd.sock',
  ].join('\n');
  assert.deepEqual(unixSocketInodes(listing, '/run/pvcd/sockets/vmd.sock'), ['31337', '31340']);
  assert.deepEqual(unixSocketInodes(listing, '/run/pvcd/sockets/netd.sock'), []);
});

const hypervisorOnly = (): [string, unknown][] => [['pvc.node', 'hv4'], ['pvc.functions.enable_hypervisor', false]];

async function world() {
  const w = fakeWorld(testConfig(...hypervisorOnly()));
  const c = await w.zkServer.connect();
  for (const p of [paths.schema.version, paths.nodes, paths.config.root]) await c.ensurePath(p);
  await c.set(paths.schema.version, '15');
  await c.close();
  const sock = (s: 'vmd' | 'keepaliled'): string => socketPath(w.deps.config.system.configuration.directories.dynamic_directory, s);
  return { w, sock };
}

test('supervisor: the children start only once the previous generation released their sockets', async () => {
  const { w, sock } = await world();
  w.socketHolders.held.set(sock('vmd'), [4242]);
  w.socketHolders.held.set(sock('keepaliled'), [4243]);
  const run = runSupervisor(w.deps);
  await w.clock.advance(3_000);
  assert.equal(w.processes.children.length, 0, 'nothing spawned while a socket is held');
  assert.ok(w.socketHolders.looks.includes(sock('vmd')));
  w.socketHolders.held.clear();
  await w.clock.advance(100);
  assert.deepEqual(w.processes.log, ['spawn netd', 'spawn vmd', 'spawn cephd', 'spawn keepaliled']);
  assert.ok(w.status.services().every((s) => s.state === 'running'));
  w.requestShutdown('SIGTERM');
  await w.clock.advance(0);
  await run;
});

test('supervisor: a socket held past the bound is reported and the children start anyway; shutdown during the wait starts nothing', async () => {
  const held = await world();
  held.w.socketHolders.held.set(held.sock('vmd'), [4242]);
  const run = runSupervisor(held.w.deps);
  await held.w.clock.advance(10_000);
  assert.equal(held.w.processes.children.length, 4);
  assert.ok(held.w.lines.some((l) => l.level === 50 && l.socket === held.sock('vmd') && JSON.stringify(l.pids) === '[4242]'));
  held.w.requestShutdown('SIGTERM');
  await held.w.clock.advance(0);
  await run;

  const early = await world();
  early.w.socketHolders.held.set(early.sock('vmd'), [4242]);
  const run2 = runSupervisor(early.w.deps);
  await early.w.clock.advance(1_000);
  early.w.requestShutdown('SIGTERM');
  await early.w.clock.advance(0);
  await run2;
  assert.equal(early.w.processes.children.length, 0);
});
