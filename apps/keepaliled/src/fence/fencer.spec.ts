import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AbortedError } from '@pvc/runtime';
import { createLock, locks, paths } from '@pvc/zk';
import { domainKeys, seedDomain } from '../testing/cluster.js';
import { settle } from '../testing/fakes.js';
import { fenceRig, RIG_INTERVAL, type FenceRig, type FenceRigOptions } from '../testing/fence-rig.js';

const k3 = paths.node('hv3');

/** Liveness running (no monitor loop), hv3 silent for longer than the window. */
async function silentHv3(opts: FenceRigOptions = {}): Promise<FenceRig> {
  const r = await fenceRig(opts);
  await seedDomain(r.writer, { uuid: 'v1', name: 'web', node: 'hv3' });
  r.liveness.start();
  r.beats.silence('hv3');
  await r.clock.advance(6 * RIG_INTERVAL + 1_000);
  return r;
}

const handle = (r: FenceRig, node: string, signal = new AbortController().signal): Promise<string> =>
  settle(r.clock, r.fencer.handle(node, signal)).then((x) => x.value);

test('the keepalive changed on the re-check (our watch lagged): the node is left alone', async () => {
  const r = await silentHv3();
  r.liveness.stop(); // our watch no longer sees the node's keepalives
  await r.writer.write([[k3.keepalive, '1700000031']]);
  assert.equal(await handle(r, 'hv3'), 'alive');
  assert.deepEqual(r.events, [{ kind: 'node-alive', node: 'hv3', fencer: 'hv1', reason: 'keepalive changed on re-check' }]);
  assert.equal(await r.writer.read(k3.daemonState), 'run');
  assert.equal(r.ipmi.calls.length, 0);
  await r.stop();
});

test('the node writes a keepalive while it is being declared dead: the guarded transaction fails, node left alone', async () => {
  const r = await silentHv3();
  r.spy.hold.fn = async (w) => {
    if (w.kind === 'multi' && w.data[k3.daemonState] === 'dead') await r.writer.write([[k3.keepalive, '1700000032']]);
  };
  assert.equal(await handle(r, 'hv3'), 'alive');
  assert.equal(r.events[0]?.kind === 'node-alive' && r.events[0].reason, 'state changed while declaring it dead');
  assert.equal(await r.writer.read(k3.daemonState), 'run');
  assert.equal(await r.writer.read(k3.domainState), 'ready');
  assert.equal(r.ipmi.calls.length, 0);
  await r.stop();
});

test('another fencer holds the node\'s daemonstate lock: skipped, nothing written', async () => {
  const r = await silentHv3();
  const other = await r.server.connect();
  const theirs = createLock(other, locks.nodeDaemonState('hv3'), { clock: r.clock, identifier: 'hv2' });
  assert.equal(await theirs.acquire({ timeoutMs: 1_000 }), true);
  assert.equal(await handle(r, 'hv3'), 'skipped');
  assert.equal(await r.writer.read(k3.daemonState), 'run');
  assert.equal(r.events.length, 0);
  await r.stop();
});

test('no IPMI details in ZK: a failed fence naming the node (action none leaves the VMs)', async () => {
  const r = await silentHv3();
  await r.writer.write([[k3.ipmiHostname, '']]);
  assert.equal(await handle(r, 'hv3'), 'fenced');
  const res = r.events.find((e) => e.kind === 'fence-result');
  assert.deepEqual(res, { kind: 'fence-result', node: 'hv3', fencer: 'hv1', outcome: 'failed', reason: 'no IPMI details in ZK for hv3' });
  assert.equal(r.ipmi.calls.length, 0);
  assert.equal((await domainKeys(r.writer, 'v1')).node, 'hv3');
  await r.stop();
});

test('fenced + fence-flush (the fencer died during recovery): resumed without another power cycle', async () => {
  const r = await fenceRig({
    nodes: [{ name: 'hv1', mode: 'coordinator' }, { name: 'hv2', mode: 'coordinator' }, { name: 'hv3', daemonState: 'fenced', domainState: 'fence-flush' }],
  });
  await seedDomain(r.writer, { uuid: 'v1', node: 'hv3' });
  assert.equal(await handle(r, 'hv3'), 'resumed');
  assert.equal(r.ipmi.calls.length, 0);
  assert.deepEqual(r.events.map((e) => e.kind), ['vm-recovered', 'recovery-done']);
  assert.equal(await r.writer.read(k3.domainState), 'flushed');
  await r.stop();
});

test('unknown nodes and nodes in other states are skipped', async () => {
  const r = await fenceRig({ nodes: [{ name: 'hv1', mode: 'coordinator' }, { name: 'hv3', daemonState: 'fenced', domainState: 'flushed' }, { name: 'hv4', daemonState: 'shutdown' }] });
  for (const n of ['ghost', 'hv3', 'hv4']) assert.equal(await handle(r, n), 'skipped', n);
  assert.equal(r.events.length, 0);
  await r.stop();
});

test('aborted mid-fence (fence lock lost): rejects, and the node stays dead + fence-flush for another fencer to resume', async () => {
  const r = await silentHv3();
  r.ipmi.knobs.latencyMs = 2_000;
  const ac = new AbortController();
  const p = r.fencer.handle('hv3', ac.signal);
  p.catch(() => undefined);
  await r.clock.advance(1_000);
  ac.abort(new Error('fence lock lost'));
  const err = await settle(r.clock, p.then(() => undefined, (e: unknown) => e)).then((x) => x.value);
  assert.ok(err instanceof AbortedError || /abort|lost/i.test(String(err)), String(err));
  assert.equal(await r.writer.read(k3.daemonState), 'dead');
  assert.equal(await r.writer.read(k3.domainState), 'fence-flush');
  assert.equal((await domainKeys(r.writer, 'v1')).node, 'hv3');
  // Our node lock was released: another fencer (here: us again) resumes.
  r.ipmi.knobs.latencyMs = 0;
  assert.equal(await handle(r, 'hv3'), 'resumed');
  assert.equal(await r.writer.read(k3.daemonState), 'fenced');
  assert.equal((await domainKeys(r.writer, 'v1')).lastnode, 'hv3');
  await r.stop();
});
