/**
 * The fault reporter as keepaliled runs it: only on the primary coordinator, every keepalive
 * interval, and never in the way of the keepalives.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateConfig } from '@pvc/config';
import { mutate } from '@pvc/config/testing';
import { VirtualClock } from '@pvc/runtime';
import { FakeIpmi } from '@pvc/ipmi';
import { codec, paths, type ZkClient } from '@pvc/zk';
import { FakeZkServer } from '@pvc/zk/testing';
import { Keepalived } from '../service.js';
import { FakeHostStats, FakePeers, FakeSelfReset, memoryLogger } from '../testing/fakes.js';
import { interceptZk, seedBase, seedDomain, seedNode } from '../testing/cluster.js';

const T0 = 1_700_000_000_000;
const VM = '11111111-2222-4333-8444-555555555555';

async function start(): Promise<{ clock: VirtualClock; writer: ZkClient; k: Keepalived; spy: ReturnType<typeof interceptZk>; ac: AbortController; run: Promise<void> }> {
  const clock = new VirtualClock(T0);
  const server = new FakeZkServer({ clock });
  const writer = await server.connect();
  await seedBase(writer);
  await seedNode(writer, T0, { name: 'hv1', mode: 'coordinator' });
  await seedNode(writer, T0, { name: 'hv2' });
  await seedDomain(writer, { uuid: VM, name: 'db', node: 'hv2', state: 'fail' });
  const config = validateConfig(
    mutate(['pvc.node', 'hv1'], ['pvc.cluster.coordinators', ['hv1']], ['pvc.functions.enable_storage', false],
      ['pvc.system.fencing.intervals.keepalive_interval', 5]),
    'wiring-spec',
  );
  const zk = await server.connect();
  const spy = interceptZk(zk, clock);
  const k = new Keepalived({
    config, zk: spy.zk, clock, logger: memoryLogger().logger, peers: new FakePeers(clock), host: new FakeHostStats(),
    ipmi: new FakeIpmi(clock), reset: new FakeSelfReset(clock),
  });
  const ac = new AbortController();
  const run = k.run(ac.signal);
  return { clock, writer, k, spy, ac, run };
}

test('the primary coordinator stores the faults every keepalive interval', async () => {
  const { clock, writer, k, ac, run } = await start();
  await clock.advance(1_000);
  assert.equal(k.election?.routerState, 'primary');
  await clock.advance(5_000);
  assert.deepEqual(await writer.children(paths.faults.root), ['VM_FAILED_DB']);
  const last = paths.faults.fault('VM_FAILED_DB').lastTime;
  await clock.advance(5_000);
  const t = codec.localTime.decode((await writer.read(last)) ?? '', last);
  assert.ok(clock.now() - t <= 5_000, 'refreshed within one interval');
  ac.abort();
  await clock.advance(1_000);
  await run;
});

test('fault writes that hang never delay the keepalives', async () => {
  const { clock, writer, k, spy, ac, run } = await start();
  await clock.advance(6_000);
  assert.deepEqual(await writer.children(paths.faults.root), ['VM_FAILED_DB']);
  spy.hold.fn = (w) => (w.paths.some((p) => p.startsWith('/faults/')) ? new Promise<void>(() => undefined) : Promise.resolve());
  const before = k.keepalive.lastKeepaliveMs;
  await clock.advance(30_000);
  assert.ok(spy.writes.some((w) => w.paths.some((p) => p.startsWith('/faults/')) && w.outcome === undefined), 'a fault write is hanging');
  assert.ok(k.keepalive.lastKeepaliveMs >= before + 25_000, 'keepalives went on every interval');
  assert.equal(k.keepalive.missed, 0);
  ac.abort();
  await clock.advance(1_000);
  await run;
});
