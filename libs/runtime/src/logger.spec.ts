import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createServiceLogging, humanLine, logFilePath } from './index.js';
import { withTempDir } from './testing/temp-dir.js';

test('file logging: JSON lines in <dir>/<service>.log (0640), passwords redacted, reopen after rename', async () => {
  await withTempDir('pvc-log-', async (dir) => {
    const out: string[] = [];
    const logs = createServiceLogging({ service: 'svc', node: 'hv1', fileDirectory: join(dir, 'log'), stdoutStream: { write: (s) => out.push(s) } });
    const file = logFilePath(join(dir, 'log'), 'svc');
    assert.equal(logs.file, file);
    logs.logger.info({ pass: 'Secr3t' }, 'first');
    assert.equal(statSync(file).mode & 0o777, 0o640);
    renameSync(file, `${file}.1`);
    logs.logger.info('second (old file)');
    logs.reopen();
    logs.logger.info('third (new file)');
    logs.close();
    const old = readFileSync(`${file}.1`, 'utf8');
    const fresh = readFileSync(file, 'utf8');
    assert.match(old, /"msg":"first"/);
    assert.match(old, /"msg":"second \(old file\)"/);
    assert.doesNotMatch(old, /Secr3t/);
    assert.match(fresh, /"msg":"third \(new file\)"/);
    assert.doesNotMatch(fresh, /first/);
    assert.equal(out.length, 3, 'stdout got every line too');
  });
});

test('stdout_logging false and no file: nothing is written anywhere', async () => {
  await withTempDir('pvc-log-', async (dir) => {
    const out: string[] = [];
    const logs = createServiceLogging({ service: 'svc', stdout: false, stdoutStream: { write: (s) => out.push(s) } });
    logs.logger.info('dropped');
    logs.reopen();
    logs.close();
    assert.deepEqual(out, []);
    assert.equal(existsSync(join(dir, 'svc.log')), false);
  });
});

test('a terminal gets human lines: coloured level with log_colours, plain without; dates follow log_dates', () => {
  const tty: string[] = [];
  const coloured = createServiceLogging({ service: 'svc', colours: true, dates: false, stdoutStream: { write: (s) => tty.push(s), isTTY: true } });
  coloured.logger.warn({ vm: 'web1' }, 'slow');
  assert.equal(tty[0], '\x1b[33mWARN \x1b[0m svc: slow vm=web1\n');
  const plain = humanLine(JSON.stringify({ level: 30, time: '2024-01-01T00:00:00.000Z', service: 's', msg: 'm', n: 2 }), false);
  assert.equal(plain, '2024-01-01T00:00:00.000Z INFO  s: m n=2\n');
  assert.equal(humanLine('not json', true), 'not json');
});

test('extra streams get every redacted JSON line; humanLine can leave out the service and supply a time', () => {
  const extra: string[] = [];
  const logs = createServiceLogging({ service: 'svc', stdout: false, extraStreams: [{ write: (s: string) => void extra.push(s) }] });
  logs.logger.info({ password: 'hunter2' }, 'login');
  assert.equal(extra.length, 1);
  assert.equal((JSON.parse(extra[0] ?? '{}') as { password: string }).password, '[redacted]');
  const rec = JSON.stringify({ level: 50, service: 's', msg: 'm' });
  assert.equal(humanLine(rec, false, { omitService: true, fallbackTime: 'T' }), 'T ERROR m\n');
  assert.equal(humanLine(rec, false), 'ERROR s: m\n');
});
