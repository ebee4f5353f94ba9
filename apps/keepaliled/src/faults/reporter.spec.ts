import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '@pvc/runtime';
import { codec, paths, resetBadValueReports, type ZkClient } from '@pvc/zk';
import { FakeZkServer } from '@pvc/zk/testing';
import { memoryLogger, settle } from '../testing/fakes.js';
import { interceptZk, seedBase, seedDomain, seedNode } from '../testing/cluster.js';
import { FaultReporter, healthAfter } from './reporter.js';

const T0 = 1_700_000_000_000;
const INTERVAL = 5_000;
const VM = '11111111-2222-4333-8444-555555555555';
const time = (ms: number): string => codec.localTime.encode(ms);

interface Rig {
  clock: VirtualClock;
  server: FakeZkServer;
  writer: ZkClient;
  spy: ReturnType<typeof interceptZk>;
  reporter: FaultReporter;
  log: ReturnType<typeof memoryLogger>;
  primary: { on: boolean };
}

/**
 * hv1 (primary), hv2 dead, hv3; VM "db" failed; hv1's `disk` plugin reports delta 20. The
 * reporter's client is wrapped by {@link interceptZk} so a test can hold its writes.
 */
async function rig(): Promise<Rig> {
  resetBadValueReports();
  const clock = new VirtualClock(T0);
  const server = new FakeZkServer({ clock });
  const writer = await server.connect();
  await seedBase(writer, { primary: 'hv1' });
  await seedNode(writer, T0, { name: 'hv1', mode: 'coordinator', routerState: 'primary' });
  await seedNode(writer, T0, { name: 'hv2', mode: 'coordinator', daemonState: 'dead' });
  await seedNode(writer, T0, { name: 'hv3' });
  await seedDomain(writer, { uuid: VM, name: 'db', node: 'hv3', state: 'fail' });
  const disk = paths.node('hv1').monitoringPlugin('disk');
  await writer.write([
    [paths.domain(VM).failedReason, 'libvirt: no such device'],
    [paths.node('hv1').monitoringPlugins, 'disk'],
    [disk.root, 'disk'], [disk.healthDelta, '20'], [disk.message, 'sda: 3 media errors'],
  ]);
  const zk = await server.connect();
  const spy = interceptZk(zk, clock);
  const log = memoryLogger();
  const primary = { on: true };
  const reporter = new FaultReporter({ zk: spy.zk, clock, logger: log.logger, intervalMs: INTERVAL, isPrimary: () => primary.on });
  return { clock, server, writer, spy, reporter, log, primary };
}

const stop = new AbortController().signal;
const ids = (zk: ZkClient): Promise<string[]> => zk.children(paths.faults.root).then((c) => c.sort());
const read = (zk: ZkClient, id: string, key: 'firstTime' | 'lastTime' | 'status' | 'delta' | 'message' | 'ackTime'): Promise<string | undefined> =>
  zk.read(paths.faults.fault(id)[key]);

describe('FaultReporter.pass()', () => {
  it('on the primary: every fault that holds is stored, stamped with the clock, and the health reported', async () => {
    const { clock, writer, reporter, log } = await rig();
    await clock.advance(1_234);
    const r = await reporter.pass(stop);
    assert.equal(r.outcome, 'written');
    assert.deepEqual(await ids(writer), ['DEAD_NODE_HV2', 'NODE_PLUGIN_DISK_HV1', 'VM_FAILED_DB']);
    assert.equal(await read(writer, 'NODE_PLUGIN_DISK_HV1', 'delta'), '10');
    assert.equal(await read(writer, 'NODE_PLUGIN_DISK_HV1', 'message'), 'Node hv1 plugin disk reports: sda: 3 media errors');
    assert.equal(await read(writer, 'VM_FAILED_DB', 'message'), 'VM db was failed: libvirt: no such device');
    assert.equal(await read(writer, 'DEAD_NODE_HV2', 'firstTime'), time(T0 + 1_234));
    assert.equal(r.health, 100 - 10 - 50 - 10);
    assert.deepEqual(log.messages(/fault raised|cluster health/).sort(), ['cluster health', 'fault raised', 'fault raised', 'fault raised']);
  });

  it('a later pass moves last_time only; an acked fault stays acked and leaves the health', async () => {
    const { clock, writer, reporter } = await rig();
    await reporter.pass(stop);
    const f = paths.faults.fault('DEAD_NODE_HV2');
    await writer.write([[f.status, 'ack'], [f.ackTime, time(T0 + 1_000)]]);
    await clock.advance(60_000);
    const r = await reporter.pass(stop);
    assert.equal(await read(writer, 'DEAD_NODE_HV2', 'firstTime'), time(T0));
    assert.equal(await read(writer, 'DEAD_NODE_HV2', 'lastTime'), time(T0 + 60_000));
    assert.equal(await read(writer, 'DEAD_NODE_HV2', 'status'), 'ack');
    assert.equal(await read(writer, 'DEAD_NODE_HV2', 'ackTime'), time(T0 + 1_000));
    assert.equal(r.health, 100 - 10 - 10);
  });

  it('faults never clear: a condition that is gone leaves its fault as it was', async () => {
    const { clock, writer, reporter } = await rig();
    await reporter.pass(stop);
    await writer.write([[paths.node('hv2').daemonState, 'run']]);
    await clock.advance(10_000);
    const r = await reporter.pass(stop);
    assert.ok(!r.active.some((f) => f.id === 'DEAD_NODE_HV2'));
    assert.deepEqual(await ids(writer), ['DEAD_NODE_HV2', 'NODE_PLUGIN_DISK_HV1', 'VM_FAILED_DB']);
    assert.equal(await read(writer, 'DEAD_NODE_HV2', 'lastTime'), time(T0), 'not touched');
    assert.equal(r.health, 30, 'still counted until acknowledged or deleted');
  });

  for (const on of ['true', 'True', 'yes', 'on', '1']) {
    it(`maintenance "${on}": nothing is written (logged once), and faults come once it is off`, async () => {
      const { writer, reporter, spy, log } = await rig();
      await writer.write([[paths.config.maintenance, on]]);
      assert.equal((await reporter.pass(stop)).outcome, 'maintenance');
      assert.equal((await reporter.pass(stop)).outcome, 'maintenance');
      assert.deepEqual(spy.writes, []);
      assert.deepEqual(await ids(writer), []);
      assert.deepEqual(log.messages(/maintenance/), ['maintenance is on: no faults are written']);
      await writer.write([[paths.config.maintenance, 'false']]);
      assert.equal((await reporter.pass(stop)).outcome, 'written');
      assert.equal((await ids(writer)).length, 3);
    });
  }

  it('not the primary: nothing is read or written', async () => {
    const { writer, reporter, primary } = await rig();
    primary.on = false;
    assert.equal((await reporter.pass(stop)).outcome, 'not-primary');
    assert.deepEqual(await ids(writer), []);
  });

  it('no /faults (schema not applied): logged once, nothing written', async () => {
    const { writer, reporter, log } = await rig();
    await writer.delete(paths.faults.root);
    assert.equal((await reporter.pass(stop)).outcome, 'no-faults-root');
    assert.equal((await reporter.pass(stop)).outcome, 'no-faults-root');
    assert.equal(log.messages(/\/faults does not exist/).length, 1);
  });

  it('a slow ZK: the pass is abandoned at its deadline, no second pass meanwhile, then it recovers', async () => {
    const { clock, writer, reporter, spy, log } = await rig();
    await reporter.pass(stop);
    let release: () => void = () => undefined;
    spy.hold.fn = () => new Promise<void>((r) => (release = r));
    const slow = await settle(clock, reporter.pass(stop));
    assert.equal(slow.value.outcome, 'timeout');
    assert.equal(slow.tookMs, INTERVAL, 'bounded by the interval');
    assert.equal((await reporter.pass(stop)).outcome, 'busy');
    spy.hold.fn = undefined;
    release();
    await clock.advance(0);
    await clock.advance(5_000);
    assert.equal((await reporter.pass(stop)).outcome, 'written');
    assert.equal(await read(writer, 'DEAD_NODE_HV2', 'lastTime'), time(clock.now()));
    assert.deepEqual(log.messages(/^fault pass/), ['fault pass failed; retrying every interval', 'fault passes work again']);
  });

  it('without a ZK connection the pass does nothing', async () => {
    const { clock, server, reporter, spy } = await rig();
    server.stop();
    await clock.advance(0);
    assert.equal((await reporter.pass(stop)).outcome, 'not-connected');
    assert.deepEqual(spy.writes, []);
    server.start();
  });

  it('failed writes are logged per fault; the next pass writes them', async () => {
    const { server, writer, reporter, log } = await rig();
    server.failNextWrite({ code: 'MARSHALLING_ERROR', count: 3 });
    const r1 = await reporter.pass(stop);
    assert.equal(r1.outcome, 'written');
    assert.deepEqual(r1.writes.map((w) => w.result), ['failed', 'failed', 'failed']);
    assert.equal(log.messages(/could not write fault/).length, 3);
    const r2 = await reporter.pass(stop);
    assert.deepEqual(r2.writes.map((w) => w.result), ['created', 'created', 'created']);
    assert.equal((await ids(writer)).length, 3);
  });
});

describe('FaultReporter.run()', () => {
  it('passes every interval while primary, none otherwise', async () => {
    const { clock, writer, reporter, primary } = await rig();
    primary.on = false;
    const ac = new AbortController();
    const loop = reporter.run(ac.signal);
    await clock.advance(3 * INTERVAL);
    assert.deepEqual(await ids(writer), [], 'secondary: nothing');
    primary.on = true;
    await clock.advance(INTERVAL);
    assert.equal((await ids(writer)).length, 3, 'within one interval of becoming primary');
    const firstLast = await read(writer, 'DEAD_NODE_HV2', 'lastTime');
    await clock.advance(2 * INTERVAL);
    assert.equal(await read(writer, 'DEAD_NODE_HV2', 'lastTime'), time(clock.now()), 'refreshed every interval');
    assert.notEqual(firstLast, time(clock.now()));
    primary.on = false;
    const frozen = await read(writer, 'DEAD_NODE_HV2', 'lastTime');
    await clock.advance(3 * INTERVAL);
    assert.equal(await read(writer, 'DEAD_NODE_HV2', 'lastTime'), frozen, 'relinquished: no more writes');
    ac.abort();
    await clock.advance(0);
    await loop;
  });
});

describe('healthAfter()', () => {
  it('stored faults with the deltas just written; created ones count as new', () => {
    const stored = [{ id: 'A', status: 'ack' as const, delta: 50 }, { id: 'B', status: 'new' as const, delta: 50 }];
    const active = [{ id: 'B', delta: 10, message: '' }, { id: 'C', delta: 20, message: '' }, { id: 'D', delta: 30, message: '' }];
    const outcomes = [{ id: 'B', result: 'updated' as const }, { id: 'C', result: 'created' as const }, { id: 'D', result: 'failed' as const, error: 'x' }];
    assert.equal(healthAfter(stored, active, outcomes), 100 - 10 - 20);
  });
});
