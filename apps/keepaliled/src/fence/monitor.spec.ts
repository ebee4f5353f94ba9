import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLock, locks, paths, resetBadValueReports } from '@pvc/zk';
import { domainKeys, seedDomain } from '../testing/cluster.js';
import { fenceRig, RIG_T0 as T0, type FenceRig, type FenceRigOptions } from '../testing/fence-rig.js';

const k3 = paths.node('hv3');

/** hv3 runs two VMs and dies at T0 (its last keepalive is the one written at T0). */
async function dyingHv3(opts: FenceRigOptions = {}): Promise<FenceRig> {
  const r = await fenceRig(opts);
  await seedDomain(r.writer, { uuid: 'v1', name: 'web', node: 'hv3', memoryMiB: 1024 });
  await seedDomain(r.writer, { uuid: 'v2', name: 'db', node: 'hv3', memoryMiB: 2048, state: 'migrate' });
  await r.writer.write([[k3.runningDomains, 'v1 v2'], [k3.domainsCount, '2'], [k3.memUsed, '3072'], [k3.monitoringHealth, '100']]);
  r.start();
  r.beats.silence('hv3');
  return r;
}

const node = async (r: FenceRig, key: 'daemonState' | 'domainState' | 'routerState'): Promise<string | undefined> => r.writer.read(k3[key]);

test('a stale run node: declared dead + fence-flush in one guarded transaction, IPMI fenced, fenced, VMs recovered, flushed, keys zeroed', async () => {
  const r = await dyingHv3();
  await r.clock.advance(29_000);
  assert.deepEqual(r.kinds(), [], 'nothing inside the window');
  await r.clock.advance(2_000);
  assert.deepEqual(r.kinds(), ['node-dead', 'fence-start', 'fence-result', 'vm-recovered', 'vm-recovered', 'recovery-done']);
  const dead = r.events[0];
  assert.ok(dead?.kind === 'node-dead' && dead.silentMs >= 30_000 && dead.silentMs <= 31_000);
  assert.deepEqual(r.events[2], { kind: 'fence-result', node: 'hv3', fencer: 'hv1', outcome: 'success', reason: 'node confirmed off; powering it back on' });
  assert.deepEqual(r.events[5], { kind: 'recovery-done', node: 'hv3', fencer: 'hv1', recovered: 2, left: 0 });

  const declare = r.spy.writes.find((w) => w.kind === 'multi' && w.data[k3.daemonState] === 'dead');
  assert.deepEqual(declare?.paths, [k3.keepalive, k3.daemonState, k3.domainState], 'keepalive version check + both states');
  assert.deepEqual(declare?.data, { [k3.daemonState]: 'dead', [k3.domainState]: 'fence-flush' });

  assert.deepEqual(r.ipmi.ops(), ['power off', 'power status', 'power on', 'power status']);
  assert.ok(r.ipmi.calls.every((c) => c.bmc === 'hv3-bmc:623'));
  const dump = r.server.dump(k3.root);
  assert.equal(dump[k3.daemonState], 'fenced');
  assert.equal(dump[k3.domainState], 'flushed');
  for (const key of [k3.runningDomains, k3.domainsCount, k3.vcpuAlloc, k3.memAlloc, k3.memProv, k3.memUsed, k3.memFree]) assert.equal(dump[key], '0', key);
  assert.equal(dump[k3.cpuLoad], '0.0');
  assert.equal(dump[k3.monitoringHealth], 'None');
  for (const vm of ['v1', 'v2']) {
    const d = await domainKeys(r.writer, vm);
    assert.equal(d.state, 'start');
    assert.equal(d.lastnode, 'hv3');
    assert.ok(d.node === 'hv1' || d.node === 'hv2', `${vm} on ${d.node}`);
  }
  assert.ok(!r.log.lines.some((l) => JSON.stringify(l).includes('secret-hv3')), 'the BMC password is never logged');

  await r.clock.advance(60_000);
  assert.equal(r.events.length, 6, 'a fenced, flushed node is done with');
  assert.equal(r.ipmi.calls.length, 4);
  await r.stop();
});

test('IPMI unreachable, failed_fence none: VMs stay, domain state restored, and the node is not fenced again and again', async () => {
  const r = await dyingHv3({ settings: { failedFence: 'none' } });
  r.ipmi.knobs.unreachable = true;
  await r.clock.advance(45_000);
  assert.deepEqual(r.kinds(), ['node-dead', 'fence-start', 'fence-result', 'fence-skipped']);
  const res = r.events[2];
  assert.ok(res?.kind === 'fence-result' && res.outcome === 'failed');
  assert.match(res.reason, /not confirmed off/);
  assert.equal(await node(r, 'daemonState'), 'dead');
  assert.equal(await node(r, 'domainState'), 'ready');
  assert.equal((await domainKeys(r.writer, 'v1')).node, 'hv3');
  assert.equal((await domainKeys(r.writer, 'v2')).state, 'migrate');
  const calls = r.ipmi.calls.length;
  await r.clock.advance(120_000);
  assert.equal(r.ipmi.calls.length, calls, 'no further power cycles');
  assert.equal(r.events.length, 4);
  await r.stop();
});

test('IPMI unreachable, failed_fence migrate: recovery waits until the node must have reset itself (suicide window + margin)', async () => {
  const r = await dyingHv3({ settings: { failedFence: 'migrate', suicideIntervals: 10 } });
  r.ipmi.knobs.unreachable = true;
  const lastSeen = r.liveness.sighting('hv3')?.seenAtMs ?? T0;
  await r.clock.advance(54_000);
  assert.deepEqual(r.kinds(), ['node-dead', 'fence-start', 'fence-result']);
  assert.equal((await domainKeys(r.writer, 'v1')).node, 'hv3', 'not moved before the node is certainly gone');
  await r.clock.advance(2_000);
  assert.deepEqual(r.kinds().slice(3), ['vm-recovered', 'vm-recovered', 'recovery-done']);
  const moved = r.spy.writes.filter((w) => w.kind === 'multi' && w.paths.includes(paths.domain('v1').lastNode));
  assert.equal(moved.length, 1);
  // suicide_intervals × interval (50 s) + margin max(interval, 5 s) after the last sighting.
  assert.equal(moved[0]?.at, lastSeen + 55_000);
  assert.equal(await node(r, 'domainState'), 'flushed');
  await r.stop();
});

test('IPMI unreachable, failed_fence migrate but suicide off: VMs are left (they may still run), with an error log', async () => {
  const r = await dyingHv3({ settings: { failedFence: 'migrate', suicideIntervals: 0 } });
  r.ipmi.knobs.unreachable = true;
  await r.clock.advance(60_000);
  assert.deepEqual(r.kinds(), ['node-dead', 'fence-start', 'fence-result', 'fence-skipped']);
  assert.equal((await domainKeys(r.writer, 'v1')).node, 'hv3');
  assert.equal(r.log.messages(/suicide_intervals is 0/).length, 1);
  await r.stop();
});

// `/config/maintenance` is read with Python's strtobool, as the original's node daemon reads it:
// any case of y/yes/t/true/on/1 is on. The dead hv3 must stay un-fenced for several windows.
for (const value of ['true', 'True', 'TRUE', 'yes', 'Yes', 'y', 't', 'on', 'ON', '1']) {
  test(`maintenance ${JSON.stringify(value)}: nothing is fenced for several windows; turned off, the stale node is fenced at the next check`, async () => {
    const r = await dyingHv3({ maintenance: true });
    await r.writer.write([[paths.config.maintenance, value]]);
    await r.clock.advance(4 * 30_000);
    assert.deepEqual(r.kinds(), []);
    assert.equal(r.ipmi.calls.length, 0);
    assert.equal(await node(r, 'daemonState'), 'run');
    assert.equal(r.log.messages(/^bad value in Zookeeper/).length, 0, 'an accepted spelling is not a bad value');
    await r.writer.write([[paths.config.maintenance, 'false']]);
    await r.clock.advance(1_000);
    assert.equal(r.kinds()[0], 'node-dead');
    await r.stop();
  });
}

for (const value of ['false', 'no', '0']) {
  test(`maintenance ${JSON.stringify(value)}: off, the dead node is fenced once its window has passed`, async () => {
    const r = await dyingHv3();
    await r.writer.write([[paths.config.maintenance, value]]);
    await r.clock.advance(29_000);
    assert.deepEqual(r.kinds(), []);
    await r.clock.advance(2_000);
    assert.deepEqual(r.kinds().slice(0, 3), ['node-dead', 'fence-start', 'fence-result']);
    await r.stop();
  });
}

test('maintenance unreadable ("maybe"): logged with its key, read as the default (off), and the dead node is fenced', async () => {
  resetBadValueReports();
  const r = await dyingHv3();
  await r.writer.write([[paths.config.maintenance, 'maybe']]);
  await r.clock.advance(31_000);
  assert.deepEqual(r.kinds().slice(0, 3), ['node-dead', 'fence-start', 'fence-result']);
  const bad = r.log.lines.filter((l) => /^bad value in Zookeeper/.test(l.msg));
  assert.equal(bad.length, 1, 'logged once, not at every delivery or check');
  assert.equal(bad[0]?.['key'], paths.config.maintenance);
  assert.equal(bad[0]?.['value'], 'maybe');
  assert.equal(bad[0]?.['fallback'], 'false');
  await r.stop();
});

for (const stored of ['empty', 'absent'] as const) {
  test(`maintenance ${stored}: the default (off), without a log line`, async () => {
    resetBadValueReports();
    const r = await dyingHv3({ maintenance: true });
    if (stored === 'empty') await r.writer.write([[paths.config.maintenance, '']]);
    else await r.writer.delete(paths.config.maintenance);
    await r.clock.advance(31_000);
    assert.equal(r.kinds()[0], 'node-dead');
    assert.equal(r.log.messages(/^bad value in Zookeeper/).length, 0);
    await r.stop();
  });
}

test('our ZK connection down: nothing is done; back up, every node gets a fresh window', async () => {
  const r = await dyingHv3();
  await r.clock.advance(25_000);
  r.server.disconnect(r.zk);
  await r.clock.advance(8_000); // T0+33 s: hv3 silent for longer than the window, but we are blind
  assert.deepEqual(r.kinds(), []);
  r.server.reconnect(r.zk);
  await r.clock.advance(29_000); // T0+62 s: 29 s since we could see again
  assert.deepEqual(r.kinds(), []);
  assert.equal(r.ipmi.calls.length, 0);
  await r.clock.advance(2_000);
  assert.equal(r.kinds()[0], 'node-dead');
  await r.stop();
});

test('fence lock held by another coordinator: nothing this pass; the fence happens once it is released', async () => {
  const r = await dyingHv3();
  const other = await r.server.connect();
  const theirs = createLock(other, locks.fence, { clock: r.clock, identifier: 'hv2' });
  assert.equal(await theirs.acquire({ timeoutMs: 1_000 }), true);
  await r.clock.advance(45_000);
  assert.deepEqual(r.kinds(), []);
  assert.equal(r.ipmi.calls.length, 0);
  assert.equal(await node(r, 'daemonState'), 'run');
  await theirs.release();
  await r.clock.advance(2_000);
  assert.deepEqual(r.kinds().slice(0, 3), ['node-dead', 'fence-start', 'fence-result']);
  await r.stop();
});

test('a fencer that died holding the fence lock (session not yet expired) is broken once silent for the window: it and hv3 are fenced', async () => {
  const r = await dyingHv3();
  // hv2 took the fence lock, then died: its session lives on (60 s) but its keepalives stop.
  const other = await r.server.connect({ sessionTimeoutMs: 60_000 });
  const theirs = createLock(other, locks.fence, { clock: r.clock, identifier: 'hv2' });
  assert.equal(await theirs.acquire({ timeoutMs: 1_000 }), true);
  r.beats.silence('hv2');
  await r.clock.advance(29_000);
  assert.deepEqual(r.kinds(), [], 'nothing while hv2 is inside its window');
  assert.equal(theirs.held, true);
  await r.clock.advance(2_000);
  const dead = r.events.filter((e) => e.kind === 'node-dead').map((e) => e.node);
  assert.deepEqual(dead, ['hv2', 'hv3'], 'both fenced in the pass that found hv2 silent for the window');
  assert.equal(theirs.held, false, 'the dead holder lost its lock node');
  assert.ok(r.log.lines.some((l) => JSON.stringify(l).includes('breaking a lock held by a node silent')), 'the break is logged');
  assert.equal(await node(r, 'domainState'), 'flushed');
  await r.stop();
});

test('a node left dead + fence-flush by a fencer that died is resumed: fenced, then its VMs recovered', async () => {
  const r = await fenceRig({
    nodes: [
      { name: 'hv1', mode: 'coordinator', routerState: 'primary' },
      { name: 'hv2', mode: 'coordinator' },
      { name: 'hv3', daemonState: 'dead', domainState: 'fence-flush', runningDomains: ['v1'] },
    ],
    beating: ['hv1', 'hv2'],
  });
  await seedDomain(r.writer, { uuid: 'v1', node: 'hv3' });
  r.start();
  await r.clock.advance(1_000);
  assert.deepEqual(r.kinds(), ['fence-start', 'fence-result', 'vm-recovered', 'recovery-done']);
  assert.deepEqual(r.events[0], { kind: 'fence-start', node: 'hv3', fencer: 'hv1', resumed: true });
  assert.equal(r.ipmi.calls.length, 4);
  assert.equal(await node(r, 'daemonState'), 'fenced');
  assert.equal(await node(r, 'domainState'), 'flushed');
  assert.equal((await domainKeys(r.writer, 'v1')).lastnode, 'hv3');
  await r.stop();
});

test('two nodes die together: fenced side by side (the second BMC call does not wait for the first fence), every VM recovered', async () => {
  const r = await fenceRig({
    nodes: [
      { name: 'hv1', mode: 'coordinator', routerState: 'primary' },
      { name: 'hv2', mode: 'coordinator', memFreeMiB: 8_000 },
      { name: 'hv3', runningDomains: ['v1', 'v2'] },
      { name: 'hv4', runningDomains: ['v3'] },
    ],
  });
  r.ipmi.knobs.latencyMs = 2_000;
  for (const [uuid, host] of [['v1', 'hv3'], ['v2', 'hv3'], ['v3', 'hv4']] as const) await seedDomain(r.writer, { uuid, node: host, memoryMiB: 512 });
  r.start();
  r.beats.silence('hv3');
  r.beats.silence('hv4');
  await r.clock.advance(31_000);
  assert.deepEqual(r.events.filter((e) => e.kind === 'fence-start').map((e) => e.node).sort(), ['hv3', 'hv4'], 'both fences started');
  const at = (op: string, bmc: string): number[] => r.ipmi.calls.filter((c) => c.op === op && c.bmc === bmc).map((c) => c.at);
  await r.clock.advance(30_000);
  const [off3] = at('power off', 'hv3-bmc:623');
  const [off4] = at('power off', 'hv4-bmc:623');
  assert.ok(off3 !== undefined && off4 !== undefined, 'both nodes were powered off');
  assert.ok(Math.abs(off3 - off4) < 2_000, `the power-offs were sent side by side (${off3 - T0} and ${off4 - T0} ms), not one fence after the other`);
  const recovered = r.events.filter((e) => e.kind === 'vm-recovered').map((e) => `${e.vm}@${e.node}`).sort();
  assert.deepEqual(recovered, ['vm-v1@hv3', 'vm-v2@hv3', 'vm-v3@hv4']);
  for (const n of ['hv3', 'hv4']) assert.equal(await r.writer.read(paths.node(n).domainState), 'flushed', n);
  await r.stop();
});

test('nodes in init, shutdown or stop are never fenced, however long they are silent', async () => {
  const r = await fenceRig({
    nodes: [
      { name: 'hv1', mode: 'coordinator' }, { name: 'hv2', daemonState: 'init' }, { name: 'hv3', daemonState: 'shutdown' }, { name: 'hv4', daemonState: 'stop' },
    ],
    beating: ['hv1'],
  });
  r.start();
  await r.clock.advance(120_000);
  assert.deepEqual(r.kinds(), []);
  assert.equal(r.ipmi.calls.length, 0);
  await r.stop();
});

test('the fencer never fences itself', async () => {
  const r = await fenceRig({ beating: ['hv2', 'hv3'] });
  r.start();
  await r.clock.advance(120_000);
  assert.deepEqual(r.kinds(), []);
  await r.stop();
});

test('a fenced primary coordinator: routerstate secondary and primary_node none', async () => {
  const r = await fenceRig({
    nodes: [{ name: 'hv1', mode: 'coordinator' }, { name: 'hv2', mode: 'coordinator', routerState: 'primary' }, { name: 'hv3' }],
    primary: 'hv2',
  });
  r.start();
  r.beats.silence('hv2');
  await r.clock.advance(31_000);
  assert.equal(r.kinds()[0], 'node-dead');
  assert.equal(await r.writer.read(paths.node('hv2').routerState), 'secondary');
  assert.equal(await r.writer.read(paths.config.primaryNode), 'none');
  assert.equal(await r.writer.read(paths.node('hv2').daemonState), 'fenced');
  await r.stop();
});

test('a fenced non-primary coordinator: routerstate secondary, primary_node untouched', async () => {
  const r = await fenceRig({ primary: 'hv1' });
  r.start();
  r.beats.silence('hv2');
  await r.clock.advance(31_000);
  assert.equal(await r.writer.read(paths.node('hv2').routerState), 'secondary');
  assert.equal(await r.writer.read(paths.config.primaryNode), 'hv1');
  await r.stop();
});
