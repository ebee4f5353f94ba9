import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeExec, rejectionOf, TimeoutError, VirtualClock } from '@pvc/runtime';
import { CephCommandError, CephOutputError, createCephCli } from './ceph-cli.js';
import { FakeRados } from './fake-rados.js';
import { createRadosCephCli, radosCommandOf, STATS_IN_FLIGHT } from './rados-ceph-cli.js';

const opts = { timeoutMs: 3000 };

test('the stats commands map to the JSON the ceph tool sends, to the mon or the mgr; others are not mapped', () => {
  assert.deepEqual(radosCommandOf('ceph', ['status'], false), { via: 'mon', cmd: { prefix: 'status' } });
  assert.deepEqual(radosCommandOf('ceph', ['health', '--format', 'json'], false), { via: 'mon', cmd: { prefix: 'health', format: 'json' } });
  assert.deepEqual(radosCommandOf('ceph', ['df'], true), { via: 'mon', cmd: { prefix: 'df', format: 'json' } });
  assert.deepEqual(radosCommandOf('ceph', ['osd', 'dump'], true), { via: 'mon', cmd: { prefix: 'osd dump', format: 'json' } });
  assert.deepEqual(radosCommandOf('ceph', ['osd', 'df'], true), { via: 'mgr', cmd: { prefix: 'osd df', format: 'json' } });
  assert.deepEqual(radosCommandOf('ceph', ['osd', 'status'], false), { via: 'mgr', cmd: { prefix: 'osd status' } });
  assert.equal(radosCommandOf('rados', ['df'], true), undefined);
  assert.equal(radosCommandOf('ceph', ['osd', 'pool', 'create', 'x', '8'], false), undefined);
  assert.equal(radosCommandOf('rbd', ['ls', 'vms'], true), undefined);
});

test('mapped commands go through librados, with no process; the rest through the tools', async () => {
  const rados = new FakeRados();
  rados.monAnswers.set('status', '  cluster:\n    id: x');
  rados.monAnswers.set('osd dump', '{"epoch": 7}');
  rados.mgrAnswers.set('osd df', '{"nodes": []}\n');
  const exec = new FakeExec().on('rados df --format json', { stdout: '{"pools": []}' });
  const cli = createRadosCephCli(rados, createCephCli(exec));
  assert.equal(await cli.text('ceph', ['status'], opts), '  cluster:\n    id: x\n', 'ended with a newline, as the tool prints it');
  assert.deepEqual(await cli.json('ceph', ['osd', 'dump'], opts), { epoch: 7 });
  assert.deepEqual(await cli.json('ceph', ['osd', 'df'], opts), { nodes: [] });
  assert.equal(await cli.json('ceph', ['df'], opts), null, 'an empty buffer is null, as from the tool');
  assert.deepEqual(await cli.json('rados', ['df'], opts), { pools: [] });
  assert.deepEqual(rados.calls, ['mon {"prefix":"status"}', 'mon {"prefix":"osd dump","format":"json"}', 'mgr {"prefix":"osd df","format":"json"}', 'mon {"prefix":"df","format":"json"}']);
  assert.deepEqual(exec.lines(), ['rados df --format json']);
});

test('a refused command, malformed JSON and a missed deadline fail as the tools\' would', async () => {
  const rados = new FakeRados();
  rados.monAnswers.set('osd dump', '{"epoch": ');
  const clock = new VirtualClock(0);
  const cli = createRadosCephCli(rados, createCephCli(new FakeExec()), clock);
  assert.match((await rejectionOf(cli.json('ceph', ['osd', 'dump'], opts), CephOutputError)).message, /^ceph osd dump --format: malformed JSON output/);
  rados.knobs.monErrno = 13;
  const refused = await rejectionOf(cli.text('ceph', ['status'], opts), CephCommandError);
  assert.equal(refused.message, 'ceph status: rados_mon_command status: (13) EACCES');
  rados.knobs.monErrno = undefined;
  rados.monCommand = () => new Promise<string>(() => undefined);
  const late = rejectionOf(cli.text('ceph', ['status'], opts), TimeoutError);
  await clock.advance(3000);
  assert.equal((await late).message, 'ceph status timed out after 3000 ms');
});

test('a hung monitor holds at most STATS_IN_FLIGHT librados calls; the others time out waiting and are never sent', async () => {
  const rados = new FakeRados();
  let sent = 0;
  rados.monCommand = () => (sent++, new Promise<string>(() => undefined));
  const clock = new VirtualClock(0);
  const cli = createRadosCephCli(rados, createCephCli(new FakeExec()), clock);
  const calls = ['status', 'df', 'health'].map((c) => rejectionOf(cli.text('ceph', [c], opts), TimeoutError));
  calls.push(rejectionOf(cli.json('ceph', ['osd', 'dump'], opts), TimeoutError));
  await clock.advance(3000);
  for (const c of calls) assert.match((await c).message, /timed out after 3000 ms$/);
  assert.equal(sent, STATS_IN_FLIGHT);
});
