import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateConfig } from '@pvc/config';
import { mutate, type Edit } from '@pvc/config/testing';
import { createServiceLogging, VirtualClock } from '@pvc/runtime';
import { paths } from '@pvc/zk';
import { FakeZkServer } from '@pvc/zk/testing';
import { serviceZkLog } from './zk-log.js';

const LOGGING = 'pvc.system.configuration.logging';

async function setup(...edits: Edit[]) {
  const config = validateConfig(mutate(...edits));
  const clock = new VirtualClock(Date.UTC(2026, 0, 1));
  const zkLog = serviceZkLog('netd', config, clock);
  const stdout: string[] = [];
  const logging = createServiceLogging({ service: 'netd', node: config.node, extraStreams: zkLog.streams, stdoutStream: { write: (s) => stdout.push(s) } });
  zkLog.reportTo(logging.logger.child({ component: 'zk-log' }));
  const server = new FakeZkServer({ clock });
  const reader = await server.connect();
  const key = paths.logs.node(config.node).messages;
  const lines = async (): Promise<string[]> => ((await reader.read(key)) ?? '').split('\n').filter((l) => l !== '');
  return { config, clock, zkLog, logger: logging.logger, server, stdout, lines };
}

test('off when zookeeper_logging is false or node_log_lines is 0: no stream, the handle does nothing', async () => {
  for (const edit of [[`${LOGGING}.zookeeper_logging`, false], [`${LOGGING}.node_log_lines`, 0]] as const) {
    const { zkLog, server, clock, lines, logger } = await setup(edit);
    assert.deepEqual(zkLog.streams, []);
    zkLog.handle.attach(await server.connect());
    logger.info('not for ZK');
    await clock.advance(2000);
    await zkLog.handle.flush();
    assert.deepEqual(await lines(), []);
  }
});

test('on by default: lines from before the attach are written, trimmed to node_log_lines; outages are reported once', async () => {
  const { zkLog, server, clock, lines, logger, stdout } = await setup([`${LOGGING}.node_log_lines`, 3]);
  assert.equal(zkLog.streams.length, 1);
  logger.info('netd started');
  zkLog.handle.attach(await server.connect());
  await clock.advance(0);
  assert.deepEqual((await lines()).map((l) => l.replace(/ \S+Z /, ' T ')), ['netd: T INFO  netd started']);
  server.stop();
  for (let i = 1; i <= 4; i++) logger.info(`tick ${i}`);
  await clock.advance(3000);
  const warnings = stdout.filter((l) => l.includes('cannot write the node log to Zookeeper'));
  assert.equal(warnings.length, 1, 'one line per outage, not one per attempt');
  server.start();
  await clock.advance(2000);
  const got = (await lines()).map((l) => l.slice(l.indexOf('  ') + 2));
  assert.equal(got.length, 3, 'trimmed to node_log_lines');
  assert.equal(got[0], 'tick 4', 'the newest lines are kept');
  assert.match(got[1] ?? '', /^cannot write the node log to Zookeeper; .* component=zk-log error=Zookeeper session suspended$/, 'the outage warning itself reaches ZK');
  assert.equal(got[2], 'writing the node log to Zookeeper component=zk-log key=/logs/pvchv1/messages');
  await zkLog.close();
});
