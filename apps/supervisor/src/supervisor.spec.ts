import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HostNetworkError } from '@pvc/hostnet';
import { rejectionOf } from '@pvc/runtime';
import { newNodeObject, paths } from '@pvc/zk';
import { LibvirtUnreachableError } from './bringup/checks.js';
import { runSupervisor } from './supervisor.js';
import { fakeWorld, testConfig } from './testing.js';

const hypervisorOnly = (): [string, unknown][] => [
  ['pvc.node', 'hv4'],
  ['pvc.functions.enable_hypervisor', false],
];

async function initTree(w: ReturnType<typeof fakeWorld>): Promise<void> {
  const c = await w.zkServer.connect();
  for (const p of [paths.schema.version, paths.nodes, paths.config.root]) await c.ensurePath(p);
  await c.set(paths.schema.version, '15');
  await c.close();
}

test('standalone: registration creates the whole node object in one transaction, then the four children; SIGTERM → shutdown, ordered stop, stop', async () => {
  const w = fakeWorld(testConfig(...hypervisorOnly()));
  await initTree(w);
  const run = runSupervisor(w.deps);
  await w.clock.advance(0);
  const dump = w.zkServer.dump(paths.node('hv4').root);
  const expected = newNodeObject({
    name: 'hv4', daemonMode: 'hypervisor', nowMs: w.clock.now(), staticData: '4 6.1.0-test GNU/Linux x86_64', pvcVersion: '0.1.0',
    ipmi: { hostname: 'pvchv1-lom', username: 'admin', password: 'Passw0rd' },
  });
  assert.deepEqual(dump, Object.fromEntries(expected.entries.map(([k, v]) => [k === '' ? expected.root : `${expected.root}/${k}`, v])));
  assert.equal(dump[paths.node('hv4').daemonState], 'init');
  assert.equal(dump[paths.node('hv4').routerState], 'client');
  assert.deepEqual(w.processes.log, ['spawn netd', 'spawn vmd', 'spawn cephd', 'spawn keepaliled']);
  assert.ok(w.status.services().every((s) => s.state === 'running'));
  assert.ok(!JSON.stringify(w.lines).includes('Passw0rd'), 'the IPMI password was logged');

  const states: string[] = [];
  const c = await w.zkServer.connect();
  c.watchData(paths.node('hv4').daemonState, (v) => void (v && states.push(v.data)));
  await w.clock.advance(0);
  w.processes.log.length = 0;
  w.requestShutdown('SIGTERM');
  await w.clock.advance(0);
  await run;
  assert.deepEqual(states, ['init', 'shutdown', 'stop']);
  assert.deepEqual(w.processes.log.filter((l) => l.startsWith('kill')), ['kill keepaliled SIGTERM', 'kill vmd SIGTERM', 'kill netd SIGTERM', 'kill cephd SIGTERM']);
  await c.close();
});

test('an existing node: mode, state init, router state, static data, version and IPMI refreshed; domain state and keepalive kept', async () => {
  const w = fakeWorld(testConfig(...hypervisorOnly(), ['pvc.cluster.coordinators', ['hv4', 'hv2', 'hv3']]));
  await initTree(w);
  const c = await w.zkServer.connect();
  const old = newNodeObject({ name: 'hv4', daemonMode: 'hypervisor', nowMs: 1000, staticData: '1 old os arch', pvcVersion: '0.0.1', ipmi: { hostname: 'x', username: 'y', password: 'z' } });
  await c.createObject(old.root, old.entries);
  const n = paths.node('hv4');
  await c.write([[n.daemonState, 'fenced'], [n.domainState, 'ready']]);
  const run = runSupervisor(w.deps);
  await w.clock.advance(0);
  const get = async (p: string) => c.read(p);
  assert.equal(await get(n.root), 'coordinator');
  assert.equal(await get(n.daemonMode), 'coordinator');
  assert.equal(await get(n.daemonState), 'init');
  assert.equal(await get(n.routerState), 'secondary');
  assert.equal(await get(n.staticData), '4 6.1.0-test GNU/Linux x86_64');
  assert.equal(await get(n.pvcVersion), '0.1.0');
  assert.deepEqual([await get(n.ipmiHostname), await get(n.ipmiUsername), await get(n.ipmiPassword)], ['pvchv1-lom', 'admin', 'Passw0rd']);
  assert.equal(await get(n.domainState), 'ready', 'start-up does not change the domain state');
  assert.equal(await get(n.keepalive), '1');
  w.requestShutdown('SIGTERM');
  await w.clock.advance(0);
  await run;
  await c.close();
});

test('Zookeeper unreachable: gives up after the bound and starts again from the top; an uninitialised tree is a clear error, retried', async () => {
  const w = fakeWorld(testConfig(...hypervisorOnly(), ['pvc.functions.enable_networking', true]), { zkTimeoutMs: 10_000 });
  w.zk.reachable = false;
  const run = runSupervisor(w.deps);
  await w.clock.advance(25_000);
  assert.equal(w.zk.connects, 3, 'connect attempts at 0, 10 and 20 s');
  const restarts = w.lines.filter((l) => l.msg === 'bring-up failed: starting again from the top');
  assert.equal(restarts.length, 2);
  assert.equal(restarts[0]?.code, 'OPERATION_TIMEOUT');
  assert.equal(w.lines.filter((l) => l.msg === 'connecting to Zookeeper').length, 3);
  w.zk.reachable = true;
  await w.clock.advance(5_000);
  const notInit = w.lines.filter((l) => l.code === 'CLUSTER_NOT_INITIALISED');
  assert.ok(notInit.length >= 1);
  assert.match(String(notInit[0]?.err), /\/schema\/version is missing\): run `pvc cluster init`/);
  assert.equal(w.processes.children.length, 0, 'nothing launched before registration');
  await initTree(w);
  await w.clock.advance(2_000);
  assert.equal(w.processes.children.length, 4);
  assert.ok(w.zk.clients.slice(0, -1).every((c) => c.state === 'closed'), 'sessions of failed rounds are closed');
  w.requestShutdown('SIGTERM');
  await w.clock.advance(0);
  await run;
});

test('the node log is attached to the session only once the node is registered: an uninitialised cluster gets no /logs key', async () => {
  const w = fakeWorld(testConfig(...hypervisorOnly()));
  const attached: string[] = [];
  const run = runSupervisor({ ...w.deps, attachLog: () => void attached.push('attached') });
  await w.clock.advance(5_000);
  assert.ok(w.lines.some((l) => l.code === 'CLUSTER_NOT_INITIALISED'));
  assert.deepEqual(attached, [], 'not attached while the tree is not initialised');
  await initTree(w);
  await w.clock.advance(2_000);
  assert.deepEqual(attached, ['attached']);
  w.requestShutdown('SIGTERM');
  await w.clock.advance(0);
  await run;
});

test('shutdown during bring-up: nothing registered, nothing launched, resolves', async () => {
  const w = fakeWorld(testConfig(...hypervisorOnly()));
  w.zk.reachable = false;
  const run = runSupervisor(w.deps);
  await w.clock.advance(1_000);
  w.requestShutdown('SIGTERM');
  await w.clock.advance(0);
  await run;
  assert.equal(w.processes.children.length, 0);
});

test('libvirt unreachable: a clear error naming the URI; daemon state shutdown → stop; nothing launched', async () => {
  const w = fakeWorld(testConfig(['pvc.node', 'hv4'], ['pvc.system.configuration.hypervisor', { libvirt_uri: 'qemu+tcp://hv4/system' }]), { externalServices: true });
  await initTree(w);
  w.exec.on('virsh -c qemu+tcp://hv4/system version', { exitCode: 1, stderr: 'error: failed to connect to the hypervisor\n' });
  const rejected = rejectionOf(runSupervisor(w.deps), LibvirtUnreachableError);
  await w.clock.advance(0);
  const err = await rejected;
  assert.match(err.message, /libvirt is not reachable at qemu\+tcp:\/\/hv4\/system \(error: failed to connect to the hypervisor\)/);
  const c = await w.zkServer.connect();
  assert.equal(await c.read(paths.node('hv4').daemonState), 'stop');
  assert.equal(w.processes.children.length, 0);
  await c.close();
});

test('host networking before registration: brcluster with the node addresses; a restart changes nothing and keeps a floating address', async () => {
  const w = fakeWorld(testConfig(...hypervisorOnly()));
  await initTree(w);
  const run = runSupervisor(w.deps);
  await w.clock.advance(0);
  const addresses = (await w.links.addresses()).map((a) => `${a.ip}/${a.prefix} ${a.device}`);
  assert.deepEqual(addresses, ['10.255.0.4/24 brcluster', '10.254.0.4/24 brcluster']);
  assert.ok(w.lines.some((l) => l.msg === 'host interfaces: 7 changes, 1 already as configured'));
  w.requestShutdown('SIGTERM');
  await w.clock.advance(0);
  await run;

  // The supervisor restarted on the same host, the primary's floating address on the bridge meanwhile.
  w.links.addExistingAddress('brcluster', '10.255.0.254', 24);
  const again = fakeWorld(testConfig(...hypervisorOnly()));
  await initTree(again);
  const opsBefore = w.links.ops.length;
  const run2 = runSupervisor({ ...again.deps, links: w.links });
  await again.clock.advance(0);
  assert.equal(w.links.ops.length, opsBefore, 'the restart changed the host interfaces');
  assert.ok(again.lines.some((l) => l.msg === 'host interfaces: 0 changes, 8 already as configured'));
  assert.ok((await w.links.addresses()).some((a) => a.ip === '10.255.0.254'), 'the floating address was dropped');
  again.requestShutdown('SIGTERM');
  await again.clock.advance(0);
  await run2;
});

test('host networking cannot be set up (a missing device): bring-up stops before Zookeeper, the error names the key, nothing launched', async () => {
  const w = fakeWorld(testConfig(...hypervisorOnly(), ['pvc.system.configuration.networking.cluster.device', 'ens9']));
  await initTree(w);
  const rejected = rejectionOf(runSupervisor(w.deps), HostNetworkError);
  await w.clock.advance(0);
  const err = await rejected;
  assert.equal(err.message, 'pvc.system.configuration.networking.cluster.device: device "ens9" does not exist');
  assert.equal(w.zk.connects, 0, 'no Zookeeper session: the node is not registered');
  assert.equal(w.processes.children.length, 0);
  assert.deepEqual(w.links.ops, []);
  const line = w.lines.find((l) => l.msg === 'host networking cannot be set up as configured: bring-up stops before registration');
  assert.equal(line?.err, err.message);
  assert.equal(line?.level, 50);
});

test('systemd mode: no children, readiness sent after registration, services reported external', async () => {
  const w = fakeWorld(testConfig(...hypervisorOnly()), { mode: 'systemd' });
  await initTree(w);
  const run = runSupervisor(w.deps);
  await w.clock.advance(0);
  assert.equal(w.notified(), 1);
  assert.equal(w.processes.children.length, 0);
  assert.deepEqual(w.status.services().map((s) => s.state), ['external', 'external', 'external', 'external']);
  w.requestShutdown('SIGTERM');
  await w.clock.advance(0);
  await run;
  const c = await w.zkServer.connect();
  assert.equal(await c.read(paths.node('hv4').daemonState), 'stop');
  await c.close();
});

test('IPMI self-check result is only logged (BMC as host:port), and does not hold up the launch', async () => {
  const w = fakeWorld(testConfig(...hypervisorOnly()));
  await initTree(w);
  w.ipmi.knobs.unreachable = true;
  const run = runSupervisor(w.deps);
  await w.clock.advance(0);
  assert.equal(w.processes.children.length, 4);
  await w.clock.advance(5_000);
  const warn = w.lines.find((l) => typeof l.msg === 'string' && l.msg.startsWith('IPMI self-check'));
  assert.equal(warn?.bmc, 'pvchv1-lom:623', JSON.stringify(warn));
  w.requestShutdown('SIGTERM');
  await w.clock.advance(0);
  await run;
});

test('the restart policy follows the fence window of the config: keepalive 1 s × 3 → no delay above 1.5 s; fencing off → the normal 30 s cap', async () => {
  const capped = fakeWorld(testConfig(...hypervisorOnly(), ['pvc.system.fencing.intervals.keepalive_interval', 1], ['pvc.system.fencing.intervals.fence_intervals', 3]));
  await initTree(capped);
  const run = runSupervisor(capped.deps);
  await capped.clock.advance(0);
  const rule = capped.lines.find((l) => l.msg === 'restart delays capped at half the fence detection window');
  assert.equal(rule?.maxDelayMs, 1_500, JSON.stringify(rule));
  const delays: number[] = [];
  for (let i = 0; i < 5; i++) {
    capped.processes.latest('keepaliled').exit(1);
    await capped.clock.advance(0);
    const t0 = capped.clock.now();
    while (capped.processes.latest('keepaliled').ended) await capped.clock.advance(100);
    delays.push(capped.clock.now() - t0);
  }
  assert.deepEqual(delays, [500, 1000, 1500, 1500, 1500]);
  assert.equal(capped.status.services().find((s) => s.name === 'keepaliled')?.state, 'crash-loop');
  capped.requestShutdown('SIGTERM');
  await capped.clock.advance(0);
  await run;

  const off = fakeWorld(testConfig(...hypervisorOnly(), ['pvc.system.fencing.intervals.fence_intervals', 0]));
  await initTree(off);
  const run2 = runSupervisor(off.deps);
  await off.clock.advance(0);
  assert.equal(off.lines.find((l) => l.msg === 'restart delays: the normal policy')?.maxDelayMs, 30_000);
  off.requestShutdown('SIGTERM');
  await off.clock.advance(0);
  await run2;
});
