import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ExecError, FakeExec, silentLogger, TimeoutError } from '@pvc/runtime';
import { flushLocks, parseLockList } from './lock-flush.js';

const deps = (exec: FakeExec) => ({ exec, logger: silentLogger(), commandTimeoutMs: 1234 });

const octopus = JSON.stringify([
  { id: 'auto 139643345791728', locker: 'client.4123', address: '10.0.0.1:0/123' },
  { id: 'auto 139643345791729', locker: 'client.4124', address: '10.0.0.2:0/456' },
]);
const nautilus = JSON.stringify({ 'auto 1': { locker: 'client.9', address: '10.0.0.3:0/789' } });

test('parseLockList: both Ceph layouts, empty output, and malformed output', () => {
  assert.deepEqual(parseLockList(octopus), [
    { id: 'auto 139643345791728', locker: 'client.4123' },
    { id: 'auto 139643345791729', locker: 'client.4124' },
  ]);
  assert.deepEqual(parseLockList(nautilus), [{ id: 'auto 1', locker: 'client.9' }]);
  assert.deepEqual(parseLockList(''), []);
  assert.deepEqual(parseLockList('[]\n'), []);
  assert.deepEqual(parseLockList('{}'), []);
  assert.throws(() => parseLockList('[{"id": "x"'), /malformed JSON/);
  assert.throws(() => parseLockList('42'), /not a list of locks/);
  assert.throws(() => parseLockList('[{"id":"x"}]'), /without id\/locker/);
});

// One row per case: what rbd answers, and what flushLocks must report and run.
const table: {
  name: string;
  setup: (exec: FakeExec) => void;
  images: string[];
  flushed: string[];
  failed: RegExp[];
  ran: string[];
}[] = [
  {
    name: 'locks present: each is removed, with its id and locker as separate arguments',
    setup: (e) => e.on('rbd lock list --format json vms/vm1_disk0', { stdout: octopus }).on('rbd lock remove', {}),
    images: ['vms/vm1_disk0'],
    flushed: ['vms/vm1_disk0'],
    failed: [],
    ran: [
      'rbd lock list --format json vms/vm1_disk0',
      'rbd lock remove vms/vm1_disk0 auto 139643345791728 client.4123',
      'rbd lock remove vms/vm1_disk0 auto 139643345791729 client.4124',
    ],
  },
  {
    name: 'no locks: flushed, nothing removed',
    setup: (e) => e.on('rbd lock list', { stdout: '[]\n' }),
    images: ['vms/a', 'vms/b'],
    flushed: ['vms/a', 'vms/b'],
    failed: [],
    ran: ['rbd lock list --format json vms/a', 'rbd lock list --format json vms/b'],
  },
  {
    name: 'malformed JSON: that image fails, the next one is still flushed',
    setup: (e) => e.on('rbd lock list --format json vms/bad', { stdout: 'rbd: garbage{' }).on('rbd lock list --format json vms/ok', { stdout: '' }),
    images: ['vms/bad', 'vms/ok'],
    flushed: ['vms/ok'],
    failed: [/^vms\/bad: rbd lock list printed malformed JSON: "rbd: garbage\{"$/],
    ran: ['rbd lock list --format json vms/bad', 'rbd lock list --format json vms/ok'],
  },
  {
    name: 'rbd missing: every image fails with the reason',
    setup: (e) => e.on('rbd', () => Promise.reject(new ExecError('rbd lock list: spawn rbd ENOENT'))),
    images: ['vms/a'],
    flushed: [],
    failed: [/^vms\/a: rbd lock list: spawn rbd ENOENT$/],
    ran: ['rbd lock list --format json vms/a'],
  },
  {
    name: 'timeout: reported for the image',
    setup: (e) =>
      e.on('rbd lock list', (_c, opts) => Promise.reject(new TimeoutError('rbd lock list --format json vms/a', opts.timeoutMs ?? -1))),
    images: ['vms/a'],
    flushed: [],
    failed: [/^vms\/a: rbd lock list --format json vms\/a timed out after 1234 ms$/],
    ran: ['rbd lock list --format json vms/a'],
  },
  {
    name: 'rbd exits non-zero (image absent): its last stderr line is the reason',
    setup: (e) => e.on('rbd lock list', { exitCode: 2, stderr: 'rbd: error opening image a: (2) No such file or directory\n' }),
    images: ['vms/a'],
    flushed: [],
    failed: [/^vms\/a: rbd lock list failed: rbd: error opening image a: \(2\) No such file or directory$/],
    ran: ['rbd lock list --format json vms/a'],
  },
  {
    name: 'a removal refused: the image fails after the lock that could not be removed',
    setup: (e) => e.on('rbd lock list', { stdout: nautilus }).on('rbd lock remove', { exitCode: 1, stderr: 'rbd: releasing lock failed: (16) Device or resource busy' }),
    images: ['vms/a'],
    flushed: [],
    failed: [/^vms\/a: rbd lock remove failed: rbd: releasing lock failed: \(16\) Device or resource busy$/],
    ran: ['rbd lock list --format json vms/a', 'rbd lock remove vms/a auto 1 client.9'],
  },
  {
    name: 'bad names are refused without running rbd; duplicates are handled once',
    setup: (e) => e.on('rbd lock list', { stdout: '[]' }),
    images: ['--pool=x/y', 'novolume', 'vms/a@snap', 'vms/a', 'vms/a'],
    flushed: ['vms/a'],
    failed: [/^--pool=x\/y: not a pool\/volume image name$/, /^novolume: not a pool/, /^vms\/a@snap: not a pool/],
    ran: ['rbd lock list --format json vms/a'],
  },
];

for (const row of table) {
  test(`flushLocks: ${row.name}`, async () => {
    const exec = new FakeExec();
    row.setup(exec);
    const r = await flushLocks(deps(exec), row.images);
    assert.deepEqual(r.flushed, row.flushed);
    assert.equal(r.failed.length, row.failed.length, r.failed.join('\n'));
    row.failed.forEach((re, i) => assert.match(r.failed[i] ?? '', re));
    assert.deepEqual(exec.lines(), row.ran);
  });
}

test('every rbd command gets the configured deadline', async () => {
  const exec = new FakeExec();
  const seen: (number | undefined)[] = [];
  exec.on('rbd', (_c, opts) => (seen.push(opts.timeoutMs), { exitCode: 0, stdout: nautilus, stderr: '' }));
  await flushLocks(deps(exec), ['vms/a']);
  assert.deepEqual(seen, [1234, 1234]);
});
