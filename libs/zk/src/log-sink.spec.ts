import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger, VirtualClock, type Logger } from '@pvc/runtime';
import { FakeZkServer } from './testing/index.js';
import { appendTrimmed, ZkLogSink, type ZkLogSinkOptions, type ZkLogSinkState } from './log-sink.js';
import { createLock } from './lock.js';
import { locks, paths } from './schema.js';
import type { ZkClient } from './types.js';

const KEY = paths.logs.node('hv1').messages;
const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);

async function setup(opts: Partial<ZkLogSinkOptions> = {}) {
  const clock = new VirtualClock(T0);
  const server = new FakeZkServer({ clock });
  const zk = await server.connect();
  const other = await server.connect();
  const events: [ZkLogSinkState, { error?: string; dropped?: number }][] = [];
  const sink = new ZkLogSink({
    service: 'vmd', node: 'hv1', clock, maxLines: 100, onStateChange: (s, d) => events.push([s, d]), ...opts,
  });
  const logger: Logger = createLogger({ service: 'vmd', node: 'hv1', dates: false, destination: sink });
  const lines = async (): Promise<string[]> => ((await other.read(KEY)) ?? '').split('\n').filter((l) => l !== '');
  return { clock, server, zk, other, sink, logger, events, lines };
}

test('buffered lines reach /logs/<node>/messages in the human form, prefixed with the service, after attach', async () => {
  const { clock, zk, other, sink, logger, lines } = await setup();
  logger.info({ vm: 'web1' }, 'starting VM');
  logger.warn('\x1b[31mred\x1b[0m text\nsecond line');
  assert.equal(await other.exists(paths.logs.node('hv1').root), undefined, 'nothing before a client is attached');
  sink.attach(zk);
  await clock.advance(0);
  assert.equal(await other.read(paths.logs.node('hv1').root), '', '/logs/<node> created empty');
  assert.deepEqual(await lines(), [
    'vmd: 2026-01-01T12:00:00.000Z INFO  starting VM vm=web1',
    'vmd: 2026-01-01T12:00:00.000Z WARN  red text\\nsecond line',
  ]);
  logger.info('later');
  assert.equal((await lines()).length, 2, 'written on the next tick, not at once');
  await clock.advance(1000);
  assert.equal((await lines()).at(-1), 'vmd: 2026-01-01T12:00:00.000Z INFO  later', 'stamped when logged');
  assert.deepEqual(sink.stats, { state: 'writing', buffered: 0, dropped: 0, written: 3 });
  await sink.close();
});

test('appends to what is there and trims to maxLines', async () => {
  const { clock, zk, other, sink, logger, lines } = await setup({ maxLines: 5 });
  await other.ensurePath(KEY);
  await other.set(KEY, 'pvcnoded: old 1\npvcnoded: old 2');
  sink.attach(zk);
  for (let i = 1; i <= 2; i++) logger.info(`line ${i}`);
  await clock.advance(1000);
  assert.deepEqual((await lines()).map((l) => l.replace(/ \S+Z INFO /, '')), ['pvcnoded: old 1', 'pvcnoded: old 2', 'vmd: line 1', 'vmd: line 2']);
  for (let i = 3; i <= 9; i++) logger.info(`line ${i}`);
  await clock.advance(1000);
  assert.deepEqual((await lines()).map((l) => l.slice(l.lastIndexOf(' ') + 1)), ['5', '6', '7', '8', '9']);
  await sink.close();
});

test('each append runs under the kazoo WriteLock on the key; a held lock delays it without blocking the logger', async () => {
  const { clock, zk, other, sink, logger, lines, events } = await setup({ lockTimeoutMs: 3000 });
  const seen = new Set<string>();
  await other.ensurePath(KEY);
  other.watchChildren(KEY, (c) => void c?.forEach((n) => seen.add(n)));
  const reader = createLock(other, locks.nodeLog('hv1'), { clock });
  assert.equal(await reader.acquire(), true);
  assert.equal(reader.kind, 'write');
  sink.attach(zk);
  logger.info('waits for the lock');
  await clock.advance(2000);
  assert.deepEqual(await lines(), [], 'not written while another writer holds the lock');
  await clock.advance(2000);
  assert.equal(events.at(-1)?.[0], 'failing', 'the bounded lock wait gave up');
  assert.match(events.at(-1)?.[1].error ?? '', /WriteLock on \/logs\/hv1\/messages was not free within 3000 ms/);
  assert.equal(sink.stats.buffered, 1, 'the line is kept for the next try');
  await reader.release();
  await clock.advance(1000);
  assert.equal((await lines()).length, 1);
  assert.equal(events.at(-1)?.[0], 'writing');
  const contenders = [...seen];
  assert.ok(contenders.length >= 2 && contenders.every((n) => /^[0-9a-f]{32}__lock__\d{10}$/.test(n)), contenders.join(','));
  assert.deepEqual(await other.children(KEY), [], 'the sink removed its contender after writing');
  await sink.close();
});

test('Zookeeper down: lines are kept and written in order once it is back', async () => {
  const { clock, server, zk, sink, logger, lines } = await setup();
  sink.attach(zk);
  logger.info('before');
  await clock.advance(1000);
  server.stop();
  for (let i = 1; i <= 3; i++) {
    logger.info(`during ${i}`);
    await clock.advance(1000);
  }
  assert.equal(sink.stats.state, 'failing');
  assert.equal(sink.stats.buffered, 3);
  server.start();
  await clock.advance(1000);
  assert.deepEqual((await lines()).map((l) => l.split('INFO  ')[1]), ['before', 'during 1', 'during 2', 'during 3']);
  assert.equal(sink.stats.state, 'writing');
  await sink.close();
});

test('a write that fails is retried with the same lines; nothing is written twice', async () => {
  const { clock, server, zk, sink, logger, lines } = await setup();
  sink.attach(zk);
  await clock.advance(0);
  server.failNextWrite({ code: 'CONNECTION_LOSS', count: 1 });
  logger.info('one');
  logger.info('two');
  await clock.advance(1000);
  await clock.advance(1000);
  assert.deepEqual((await lines()).map((l) => l.split('INFO  ')[1]), ['one', 'two']);
  await sink.close();
});

test('the buffer is bounded: the oldest lines are dropped, counted and announced when writing resumes', async () => {
  const { clock, server, zk, sink, logger, lines, events } = await setup({ bufferLines: 10 });
  sink.attach(zk);
  await clock.advance(0);
  server.stop();
  for (let i = 1; i <= 25; i++) logger.info(`n ${i}`);
  await clock.advance(3000);
  assert.deepEqual(sink.stats, { state: 'failing', buffered: 10, dropped: 15, written: 0 });
  server.start();
  await clock.advance(1000);
  const got = await lines();
  assert.match(got[0] ?? '', /^vmd: \S+ WARN  15 log lines dropped while Zookeeper could not be written \(buffer of 10 lines\)$/);
  assert.deepEqual(got.slice(1).map((l) => l.split('INFO  ')[1]), Array.from({ length: 10 }, (_, i) => `n ${i + 16}`));
  assert.deepEqual(events.at(-1), ['writing', { dropped: 15 }]);
  assert.equal(sink.stats.dropped, 0);
  await sink.close();
});

test('passwords logged in objects show as [redacted] in Zookeeper', async () => {
  const { clock, zk, sink, logger, lines } = await setup();
  sink.attach(zk);
  logger.info({ password: 'hunter2', ipmi: { host: 'bmc1', pass: 'Passw0rd' } }, 'fencing');
  await clock.advance(1000);
  const [line] = await lines();
  assert.match(line ?? '', /fencing password=\[redacted\] ipmi=\{"host":"bmc1","pass":"\[redacted\]"\}/);
  assert.doesNotMatch(line ?? '', /hunter2|Passw0rd/);
  await sink.close();
});

test('nothing is written at idle, timers stop with the client, close writes the last lines', async () => {
  const { clock, server, zk, other, sink, logger } = await setup();
  sink.attach(zk);
  await clock.advance(0);
  const version = async (): Promise<number | undefined> => (await other.exists(KEY))?.version;
  logger.info('one');
  await clock.advance(1000);
  const v = await version();
  await clock.advance(10_000);
  assert.equal(await version(), v, 'no write without new lines');
  logger.info('last words');
  await sink.close();
  assert.match((await other.read(KEY)) ?? '', /last words$/);
  logger.info('after close');
  assert.equal(sink.stats.buffered, 0);
  const zk2: ZkClient = await server.connect();
  const sink2 = new ZkLogSink({ service: 'vmd', node: 'hv1', clock, maxLines: 10 });
  sink2.attach(zk2);
  await clock.advance(0);
  const pending = clock.pending();
  await zk2.close();
  assert.ok(clock.pending() < pending, 'the write timer stopped with the client');
  sink2.write('{"level":30,"msg":"x"}\n');
  await clock.advance(5000);
  assert.equal(sink2.stats.buffered, 1, 'kept, not written through a closed client');
});

test('appendTrimmed: empty start, line limit, ZK value size limit', () => {
  assert.equal(appendTrimmed('', ['a', 'b'], 5), 'a\nb');
  assert.equal(appendTrimmed('a\nb\nc', ['d'], 2), 'c\nd');
  const big = 'x'.repeat(100_000);
  const out = appendTrimmed('', Array.from({ length: 20 }, () => big), 2000);
  assert.equal(out.split('\n').length, 8, 'kept under 900 000 bytes');
});

test('a bad node name is refused at construction; bad lines never throw into the logger', () => {
  const clock = new VirtualClock(T0);
  assert.throws(() => new ZkLogSink({ service: 'vmd', node: 'a/b', clock, maxLines: 1 }), /node name/);
  const sink = new ZkLogSink({ service: 'vmd', node: 'hv1', clock, maxLines: 1, maxLineChars: 10 });
  sink.write('not json at all, and rather long\nnull\n');
  assert.equal(sink.stats.buffered, 1, 'non-JSON passes (cut); an unrenderable line is skipped');
});
