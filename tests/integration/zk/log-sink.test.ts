// The node log against a real ZooKeeper server: two daemons of one node (two sinks, two sessions)
// append to /logs/<node>/messages under the kazoo WriteLock without losing lines, and the trim holds.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLogger, realClock, type Logger } from '@pvc/runtime';
import { connectZk, createLock, locks, paths, ZkLogSink, type RealZkClient } from '@pvc/zk';
import { waitUntil } from '../../support/wait.js';
import { ZkTestServer } from '../../support/zk-server.js';

describe('real ZooKeeper: node log sinks', () => {
  let server: ZkTestServer;
  const clients: RealZkClient[] = [];
  const connect = async (): Promise<RealZkClient> => {
    const c = await connectZk({ hosts: ['127.0.0.1'], port: server.port, sessionTimeoutMs: 6000, spinDelayMs: 100, clock: realClock });
    clients.push(c);
    return c;
  };
  /** A daemon of `node`: its own session, sink and logger, writing every 50 ms. */
  const daemon = async (service: string, node: string, maxLines: number): Promise<{ sink: ZkLogSink; logger: Logger }> => {
    const sink = new ZkLogSink({ service, node, clock: realClock, maxLines, intervalMs: 50 });
    sink.attach(await connect());
    return { sink, logger: createLogger({ service, node, dates: false, destination: sink }) };
  };
  /** Logs `count` numbered lines in bursts of 7, yielding between bursts so the sinks' writes interleave. */
  const logMany = async (logger: Logger, count: number): Promise<void> => {
    for (let i = 1; i <= count; i++) {
      logger.info({ seq: i }, 'tick');
      if (i % 7 === 0) await realClock.sleep(10);
    }
  };
  const seqs = (lines: readonly string[], service: string): number[] =>
    lines.filter((l) => l.startsWith(`${service}: `)).map((l) => Number(/seq=(\d+)$/.exec(l)?.[1]));

  before(async () => {
    server = await ZkTestServer.start();
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await server.destroy();
  });

  it('two writers of one node interleave without losing or repeating a line', async (t) => {
    const a = await daemon('keepaliled', 'hv1', 10_000);
    const b = await daemon('vmd', 'hv1', 10_000);
    await Promise.all([logMany(a.logger, 600), logMany(b.logger, 600)]);
    await Promise.all([a.sink.close(), b.sink.close()]);
    const reader = await connect();
    const key = paths.logs.node('hv1').messages;
    const lines = ((await reader.read(key)) ?? '').split('\n');
    const range = Array.from({ length: 600 }, (_, i) => i + 1);
    assert.deepEqual(seqs(lines, 'keepaliled'), range, 'every keepaliled line once, in order');
    assert.deepEqual(seqs(lines, 'vmd'), range, 'every vmd line once, in order');
    assert.equal(lines.length, 1200);
    const firstVmd = lines.findIndex((l) => l.startsWith('vmd: '));
    const lastKeepaliled = lines.findLastIndex((l) => l.startsWith('keepaliled: '));
    assert.ok(firstVmd < lastKeepaliled, 'the two daemons appended in turn, not one after the other');
    const stat = await reader.exists(key);
    assert.ok(stat !== undefined && stat.version >= 4, `several appends (version ${stat?.version})`);
    assert.deepEqual(await reader.children(key), [], 'no lock contender left behind');
    assert.equal(await reader.read(paths.logs.node('hv1').root), '', '/logs/<node> exists, empty');
    t.diagnostic(`2 × 600 lines in ${stat?.version ?? 0} appends`);
  });

  it('the trim to maxLines holds at every moment, and the newest lines of each writer are kept', async () => {
    const MAX = 100;
    const reader = await connect();
    const key = paths.logs.node('hv2').messages;
    let largest = 0;
    let observed = 0;
    await reader.ensurePath(key);
    const stop = reader.watchData(key, (v) => {
      observed++;
      largest = Math.max(largest, v?.data === undefined || v.data === '' ? 0 : v.data.split('\n').length);
    });
    const a = await daemon('keepaliled', 'hv2', MAX);
    const b = await daemon('vmd', 'hv2', MAX);
    await Promise.all([logMany(a.logger, 400), logMany(b.logger, 400)]);
    await Promise.all([a.sink.close(), b.sink.close()]);
    const lines = ((await reader.read(key)) ?? '').split('\n');
    // The watch delivers its values asynchronously (a re-read each): wait for those counted below.
    await waitUntil(() => observed, { what: 'three values seen by the watch', until: (n) => n >= 3 });
    stop();
    assert.equal(lines.length, MAX);
    for (const service of ['keepaliled', 'vmd']) {
      const got = seqs(lines, service);
      const n = got.length;
      assert.deepEqual(got, Array.from({ length: n }, (_, i) => 400 - n + 1 + i), `${service}: its newest ${n} lines, in order`);
    }
    assert.ok(observed >= 3, `watched ${observed} values`);
    assert.ok(largest <= MAX, `never more than ${MAX} lines (saw ${largest})`);
  });

  it('a WriteLock held by another session (as the Python daemons take it) holds the append back', async () => {
    const other = await connect();
    const key = paths.logs.node('hv3').messages;
    const held = createLock(other, locks.nodeLog('hv3'), { clock: realClock });
    assert.equal(await held.acquire({ timeoutMs: 2000 }), true);
    const a = await daemon('netd', 'hv3', 50);
    a.logger.info('held back');
    // Not a fixed sleep: wait until the sink queues behind the held lock (its contender appears).
    await waitUntil(() => other.children(key), { what: "the sink's contender queued behind the held lock", until: (c) => c.length >= 2, timeoutMs: 5000 });
    assert.equal((await other.read(key)) ?? '', '', 'nothing appended while the lock is held');
    await held.release();
    const end = realClock.now() + 3000;
    while (!((await other.read(key)) ?? '').includes('held back') && realClock.now() < end) await realClock.sleep(25);
    assert.match((await other.read(key)) ?? '', /^netd: \S+ INFO  held back$/m);
    await a.sink.close();
  });
});
