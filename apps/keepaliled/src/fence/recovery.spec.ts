import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '@pvc/runtime';
import { paths, readVmFacts, type VmState, type ZkClient } from '@pvc/zk';
import { FakeZkServer } from '@pvc/zk/testing';
import type { KeepalivedEvent } from '../model.js';
import { moveVm, recoverVms, RUNNING_STATES, type RecoveryDeps } from './recovery.js';
import { FakePeers, memoryLogger } from '../testing/fakes.js';
import { domainKeys, interceptZk, seedBase, seedDomain, seedNode } from '../testing/cluster.js';

const T0 = 1_700_000_000_000;

interface Rig {
  clock: VirtualClock;
  raw: ZkClient;
  spy: ReturnType<typeof interceptZk>;
  peers: FakePeers;
  events: KeepalivedEvent[];
  deps: RecoveryDeps;
}

async function rig(opts: { storage?: boolean; targets?: { name: string; freeMiB: number; domainState?: string }[] } = {}): Promise<Rig> {
  const clock = new VirtualClock(T0);
  const server = new FakeZkServer({ clock });
  const raw = await server.connect();
  await seedBase(raw, { selector: 'mem' });
  await seedNode(raw, T0, { name: 'hv1', daemonState: 'fenced', domainState: 'fence-flush' });
  const targets = opts.targets ?? [{ name: 'hv2', freeMiB: 16_000 }, { name: 'hv3', freeMiB: 8_000 }];
  for (const t of targets) await seedNode(raw, T0, { name: t.name, memFreeMiB: t.freeMiB, domainState: t.domainState ?? 'ready' });
  const spy = interceptZk(raw, clock);
  const peers = new FakePeers(clock);
  const events: KeepalivedEvent[] = [];
  const deps: RecoveryDeps = {
    self: 'hv2', zk: spy.zk, logger: memoryLogger().logger, events: (e) => events.push(e), peers,
    storageEnabled: opts.storage ?? false, defaultSelector: 'mem',
  };
  return { clock, raw, spy, peers, events, deps };
}

test('running-state VMs of the dead node move (state/node/lastnode in one guarded transaction); others stay', async () => {
  const r = await rig();
  const states: VmState[] = [...RUNNING_STATES, 'stop', 'disable', 'fail', 'shutdown'];
  for (const [i, state] of states.entries()) await seedDomain(r.raw, { uuid: `u${i}`, name: `vm-${state}`, node: 'hv1', state, memoryMiB: 512 });
  await seedDomain(r.raw, { uuid: 'elsewhere', node: 'hv3', state: 'start' });
  const result = await recoverVms(r.deps, 'hv1');
  assert.deepEqual(result, { recovered: RUNNING_STATES.length, left: 0 });
  for (const [i, state] of states.entries()) {
    const got = await domainKeys(r.raw, `u${i}`);
    if (RUNNING_STATES.includes(state)) assert.deepEqual([got.state, got.node, got.lastnode], ['start', 'hv2', 'hv1'], state);
    else assert.deepEqual([got.state, got.node, got.lastnode], [state, 'hv1', ''], state);
  }
  assert.equal((await domainKeys(r.raw, 'elsewhere')).node, 'hv3');
  const moves = r.spy.writes.filter((w) => w.kind === 'multi');
  assert.equal(moves.length, RUNNING_STATES.length, 'one transaction per VM');
  const d = paths.domain('u0');
  assert.deepEqual(moves[0]?.paths, [d.node, d.state, d.node, d.lastNode], 'check of node, then the three sets');
  assert.deepEqual(r.events.map((e) => e.kind), RUNNING_STATES.map(() => 'vm-recovered'));
  assert.deepEqual(r.events[0], { kind: 'vm-recovered', node: 'hv1', vm: 'vm-start', target: 'hv2', fencer: 'hv2' });
});

test('the moves are planned together: a second VM goes where the first one left room', async () => {
  const r = await rig({ targets: [{ name: 'hv2', freeMiB: 5_000 }, { name: 'hv3', freeMiB: 4_000 }] });
  await seedDomain(r.raw, { uuid: 'a', node: 'hv1', memoryMiB: 3_000 });
  await seedDomain(r.raw, { uuid: 'b', node: 'hv1', memoryMiB: 3_000 });
  assert.deepEqual(await recoverVms(r.deps, 'hv1'), { recovered: 2, left: 0 });
  assert.equal((await domainKeys(r.raw, 'a')).node, 'hv2');
  assert.equal((await domainKeys(r.raw, 'b')).node, 'hv3');
});

test('a VM whose node changed meanwhile is left alone', async () => {
  const r = await rig();
  await seedDomain(r.raw, { uuid: 'a', name: 'moved-by-api', node: 'hv1' });
  await seedDomain(r.raw, { uuid: 'b', name: 'ours', node: 'hv1' });
  let first = true;
  r.spy.hold.fn = async () => {
    if (!first) return;
    first = false;
    // The API moves VM a (to hv3, state migrate) between our read and our transaction.
    await r.raw.write([[paths.domain('a').node, 'hv3'], [paths.domain('a').state, 'migrate']]);
  };
  assert.deepEqual(await recoverVms(r.deps, 'hv1'), { recovered: 1, left: 1 });
  assert.deepEqual(await domainKeys(r.raw, 'a'), { state: 'migrate', node: 'hv3', lastnode: '', autostart: 'False' });
  assert.equal((await domainKeys(r.raw, 'b')).node, 'hv2');
  assert.deepEqual(r.events.map((e) => e.kind === 'vm-recovered' && e.vm), ['ours']);
});

test('no target: state stop + node_autostart True (what the original meant) + failedreason naming why, in one guarded transaction; reported as left', async () => {
  const r = await rig({ targets: [{ name: 'hv2', freeMiB: 16_000, domainState: 'flushed' }, { name: 'hv3', freeMiB: 100 }] });
  await seedDomain(r.raw, { uuid: 'a', name: 'big', node: 'hv1', state: 'start', memoryMiB: 2_048 });
  assert.deepEqual(await recoverVms(r.deps, 'hv1'), { recovered: 0, left: 1 });
  assert.deepEqual(await domainKeys(r.raw, 'a'), { state: 'stop', node: 'hv1', lastnode: '', autostart: 'True' });
  assert.equal(
    await r.raw.read(paths.domain('a').failedReason),
    'Recovery from fenced node hv1: no target (hv1: current node of the VM; hv2: domain state flushed; hv3: 100 MiB free < 2048 MiB needed)',
  );
  const d = paths.domain('a');
  assert.deepEqual(r.spy.writes.filter((w) => w.kind === 'multi').map((w) => w.paths), [[d.node, d.state, d.nodeAutostart, d.failedReason]]);
  const ev = r.events[0];
  assert.equal(ev?.kind, 'vm-stopped');
  assert.match(ev?.kind === 'vm-stopped' ? ev.reason : '', /^no target: .*hv2: domain state flushed.*hv3: 100 MiB free < 2048 MiB needed/);
});

test('idempotent: a second run (a resumed recovery) touches nothing', async () => {
  const r = await rig();
  await seedDomain(r.raw, { uuid: 'a', node: 'hv1' });
  await seedDomain(r.raw, { uuid: 'b', node: 'hv1', state: 'migrate' });
  await recoverVms(r.deps, 'hv1');
  const writes = r.spy.writes.length;
  const events = r.events.length;
  assert.deepEqual(await recoverVms(r.deps, 'hv1'), { recovered: 0, left: 0 });
  assert.equal(r.spy.writes.length, writes);
  assert.equal(r.events.length, events);
});

test('storage enabled: RBD locks of every VM to move are flushed first, in one call; a VM whose locks cannot be cleared is left where it is', async () => {
  const r = await rig({ storage: true });
  await seedDomain(r.raw, { uuid: 'a', name: 'locked', node: 'hv1', rbdList: ['vms/locked_disk0'] });
  await seedDomain(r.raw, { uuid: 'b', name: 'clean', node: 'hv1', rbdList: ['vms/clean_disk0', 'vms/clean_disk1'] });
  await seedDomain(r.raw, { uuid: 'c', name: 'nodisk', node: 'hv1' });
  r.peers.knobs.rbdFailures = new Set(['vms/locked_disk0']);
  assert.deepEqual(await recoverVms(r.deps, 'hv1'), { recovered: 2, left: 1 });
  assert.deepEqual(await domainKeys(r.raw, 'a'), { state: 'start', node: 'hv1', lastnode: '', autostart: 'False' });
  assert.equal((await domainKeys(r.raw, 'b')).node, 'hv2');
  assert.deepEqual(r.peers.callsOf('flushRbdLocks').map((c) => c.args), [[['vms/locked_disk0', 'vms/clean_disk0', 'vms/clean_disk1'], 'hv1']], 'the images, and the dead node (its OSDs marked down)');
  assert.deepEqual(r.events.filter((e) => e.kind === 'vm-left').length, 1);
  const left = r.events.find((e) => e.kind === 'vm-left');
  assert.equal(left?.kind === 'vm-left' && left.vm, 'locked');
  assert.match(left?.kind === 'vm-left' ? left.reason : '', /RBD locks not cleared: vms\/locked_disk0/);
});

test('storage enabled and cephd down: every VM with disks is left; storage disabled: cephd is not asked', async () => {
  const r = await rig({ storage: true });
  await seedDomain(r.raw, { uuid: 'a', node: 'hv1', rbdList: ['vms/a_disk0'] });
  r.peers.knobs.mode = { flushRbdLocks: 'fail' };
  assert.deepEqual(await recoverVms(r.deps, 'hv1'), { recovered: 0, left: 1 });
  assert.equal((await domainKeys(r.raw, 'a')).node, 'hv1');
  assert.match(r.events[0]?.kind === 'vm-left' ? r.events[0].reason : '', /UNAVAILABLE/);

  const off = await rig({ storage: false });
  await seedDomain(off.raw, { uuid: 'a', node: 'hv1', rbdList: ['vms/a_disk0'] });
  off.peers.knobs.mode = { flushRbdLocks: 'fail' };
  assert.deepEqual(await recoverVms(off.deps, 'hv1'), { recovered: 1, left: 0 });
  assert.equal(off.peers.callsOf('flushRbdLocks').length, 0);
});

test('a node_limit naming unknown nodes is logged with the VM and its key; the VM still moves within the known ones', async () => {
  const r = await rig();
  const log = memoryLogger();
  r.deps.logger = log.logger;
  await seedDomain(r.raw, { uuid: 'lim', name: 'vm-lim', node: 'hv1', state: 'start', memoryMiB: 512, nodeLimit: ['hv3', 'hv9'] });
  assert.deepEqual(await recoverVms(r.deps, 'hv1'), { recovered: 1, left: 0 });
  assert.equal((await domainKeys(r.raw, 'lim')).node, 'hv3');
  const warned = log.lines.filter((l) => /node_limit names nodes that do not exist/.test(l.msg));
  assert.equal(warned.length, 1);
  assert.equal(warned[0]?.['key'], paths.domain('lim').nodeLimit);
  assert.deepEqual(warned[0]?.['unknown'], ['hv9']);
});

test('moveVm with extra checks (the recovery retry): one transaction, node check first, then the checks, then the sets with the no-target marks cleared', async () => {
  const r = await rig();
  await seedDomain(r.raw, { uuid: 'a', name: 'waiting', node: 'hv1', state: 'stop' });
  await r.raw.write([[paths.domain('a').nodeAutostart, 'True'], [paths.domain('a').failedReason, 'Recovery from fenced node hv1: no target (no nodes)']]);
  const vm = await readVmFacts(r.raw, 'a');
  assert.ok(vm);
  const state = await r.raw.get(paths.domain('a').state);
  const checks = [{ type: 'check' as const, path: paths.domain('a').state, version: state.stat.version }];
  assert.equal(await moveVm(r.deps, vm, 'hv1', 'hv2', { checks, retried: true }), true);
  const d = paths.domain('a');
  assert.deepEqual(r.spy.writes.map((w) => w.paths), [[d.node, d.state, d.state, d.node, d.lastNode, d.nodeAutostart, d.failedReason]]);
  assert.deepEqual(await domainKeys(r.raw, 'a'), { state: 'start', node: 'hv2', lastnode: 'hv1', autostart: 'False' });
  assert.equal(await r.raw.read(d.failedReason), '');
  assert.deepEqual(r.events, [{ kind: 'vm-recovered', node: 'hv1', vm: 'waiting', target: 'hv2', fencer: 'hv2', retried: true }]);
});

test('moveVm: a failed extra check writes nothing and reports the VM as left alone', async () => {
  const r = await rig();
  await seedDomain(r.raw, { uuid: 'a', name: 'waiting', node: 'hv1', state: 'stop' });
  const vm = await readVmFacts(r.raw, 'a');
  assert.ok(vm);
  const state = await r.raw.get(paths.domain('a').state);
  // An operator starts it meanwhile (state changes; node does not).
  await r.raw.write([[paths.domain('a').state, 'start']]);
  const checks = [{ type: 'check' as const, path: paths.domain('a').state, version: state.stat.version }];
  assert.equal(await moveVm(r.deps, vm, 'hv1', 'hv2', { checks, retried: true }), false);
  assert.deepEqual(await domainKeys(r.raw, 'a'), { state: 'start', node: 'hv1', lastnode: '', autostart: 'False' });
  assert.deepEqual(r.events, []);
});

test('a target known to lack one of the VM\'s networks (networks_up) is not chosen; a node whose networks are unknown still is', async () => {
  const r = await rig({ targets: [{ name: 'hv2', freeMiB: 16_000 }, { name: 'hv3', freeMiB: 8_000 }, { name: 'hv4', freeMiB: 32_000 }] });
  await r.raw.write([[paths.node('hv2').networksUp, '1200'], [paths.node('hv3').networksUp, '1100 1200'], [paths.node('hv4').networksUp, '']]);
  const nic = (bridge: string): string => `<domain type='kvm'><name>vm-net</name><memory unit='MiB'>512</memory><vcpu>1</vcpu><devices><interface type='bridge'><source bridge='${bridge}'/></interface></devices></domain>`;
  await seedDomain(r.raw, { uuid: 'net', name: 'vm-net', node: 'hv1', memoryMiB: 512 });
  await r.raw.write([[paths.domain('net').xml, nic('vmbr1100')]]);
  await seedDomain(r.raw, { uuid: 'lost', name: 'vm-lost', node: 'hv1', memoryMiB: 512 });
  await r.raw.write([[paths.domain('lost').xml, nic('vmbr1300')]]);
  assert.deepEqual(await recoverVms(r.deps, 'hv1'), { recovered: 1, left: 1 });
  assert.equal((await domainKeys(r.raw, 'net')).node, 'hv3', 'hv2 and hv4 have more room but lack network 1100');
  assert.equal(await r.raw.read(paths.domain('lost').failedReason),
    'Recovery from fenced node hv1: no target (hv1: current node of the VM; hv2: lacks network 1300 (vmbr1300); hv3: lacks network 1300 (vmbr1300); hv4: lacks network 1300 (vmbr1300))');
  await r.raw.delete(paths.node('hv4').networksUp);
  await r.raw.write([[paths.domain('lost').state, 'start']]);
  assert.deepEqual(await recoverVms(r.deps, 'hv1'), { recovered: 1, left: 0 });
  assert.equal((await domainKeys(r.raw, 'lost')).node, 'hv4', 'unknown networks are not checked');
});

test('moveVm alone (the recovery retry) flushes its own images; a VM recovery could not place is not flushed', async () => {
  const r = await rig({ storage: true, targets: [{ name: 'hv2', freeMiB: 1_000 }] });
  await seedDomain(r.raw, { uuid: 'a', name: 'fits', node: 'hv1', state: 'start', memoryMiB: 512, rbdList: ['vms/fits_disk0'] });
  await seedDomain(r.raw, { uuid: 'b', name: 'big', node: 'hv1', state: 'start', memoryMiB: 4_096, rbdList: ['vms/big_disk0'] });
  assert.deepEqual(await recoverVms(r.deps, 'hv1'), { recovered: 1, left: 1 });
  assert.deepEqual(r.peers.callsOf('flushRbdLocks').map((c) => c.args[0]), [['vms/fits_disk0']]);
  await r.raw.write([[paths.node('hv2').memFree, '16000']]);
  const vm = await readVmFacts(r.raw, 'b');
  assert.ok(vm);
  assert.equal(await moveVm(r.deps, vm, 'hv1', 'hv2', { retried: true }), true);
  assert.deepEqual(r.peers.callsOf('flushRbdLocks').map((c) => c.args[0]), [['vms/fits_disk0'], ['vms/big_disk0']]);
});
