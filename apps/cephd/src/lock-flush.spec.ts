import { test } from 'node:test';
import assert from 'node:assert/strict';
import { captureLogger, ExecError, FakeExec, TimeoutError } from '@pvc/runtime';
import { cliLockOps, FLUSH_PARALLEL_IMAGES, flushLocks, type FlushMode } from './lock-flush.js';

const logCapture = () => captureLogger('cephd');

const OWN = '10.254.0.1';
const deps = (exec: FakeExec) => ({ ops: cliLockOps({ exec, commandTimeoutMs: 1234 }), logger: logCapture().logger });

// Two locks of this node (a dead QEMU's and a shared one): stale, removable before a start.
const ownLocks = JSON.stringify([
  { id: 'auto 139643345791728', locker: 'client.4123', address: '10.254.0.1:0/123' },
  { id: 'auto 139643345791729', locker: 'client.4124', address: 'v2:10.254.0.1:0/456' },
]);
// Nautilus layout, held from another node.
const foreign = JSON.stringify({ 'auto 1': { locker: 'client.9', address: '10.254.0.2:0/789' } });
// Shared locks from this node and another one.
const mixed = JSON.stringify([
  { id: 'tag 1', locker: 'client.10', address: '10.254.0.1:0/11' },
  { id: 'tag 2', locker: 'client.20', address: '10.254.0.2:0/22' },
]);

const FOREIGN_REASON = /^vms\/b: locked by client\.9 at 10\.254\.0\.2:0\/789 \(lock "auto 1"\), not by this node \(this node's storage address is 10\.254\.0\.1\); not removed: another node may still be writing$/;

// One row per case: the mode, what rbd answers, and what flushLocks must report and run.
const table: {
  name: string;
  mode: FlushMode;
  own?: string | null;
  setup: (exec: FakeExec) => void;
  images: string[];
  flushed: string[];
  failed: RegExp[];
  held?: { image: string; locker: string; address: string }[];
  ran: string[];
}[] = [
  {
    name: 'own: this node\'s stale locks are removed, each with its id and locker as separate arguments',
    mode: 'own',
    setup: (e) => e.on('rbd lock list --format json vms/a', { stdout: ownLocks }).on('rbd lock remove', {}),
    images: ['vms/a'],
    flushed: ['vms/a'],
    failed: [],
    ran: [
      'rbd lock list --format json vms/a',
      'rbd lock remove vms/a auto 139643345791728 client.4123',
      'rbd lock remove vms/a auto 139643345791729 client.4124',
    ],
  },
  {
    name: 'own: a lock held from another address is refused, named, and not removed',
    mode: 'own',
    setup: (e) => e.on('rbd lock list --format json vms/b', { stdout: foreign }),
    images: ['vms/b'],
    flushed: [],
    failed: [FOREIGN_REASON],
    held: [{ image: 'vms/b', locker: 'client.9', address: '10.254.0.2:0/789' }],
    ran: ['rbd lock list --format json vms/b'],
  },
  {
    name: 'own: mixed — own image flushed, foreign image refused, an image with both refused whole (its own lock kept too)',
    mode: 'own',
    setup: (e) => e
      .on('rbd lock list --format json vms/a', { stdout: ownLocks })
      .on('rbd lock list --format json vms/b', { stdout: foreign })
      .on('rbd lock list --format json vms/c', { stdout: mixed })
      .on('rbd lock remove', {}),
    images: ['vms/a', 'vms/b', 'vms/c'],
    flushed: ['vms/a'],
    failed: [FOREIGN_REASON, /^vms\/c: locked by client\.20 at 10\.254\.0\.2:0\/22 \(lock "tag 2"\), not by this node/],
    held: [{ image: 'vms/b', locker: 'client.9', address: '10.254.0.2:0/789' }, { image: 'vms/c', locker: 'client.20', address: '10.254.0.2:0/22' }],
    ran: [
      'rbd lock list --format json vms/a',
      'rbd lock remove vms/a auto 139643345791728 client.4123',
      'rbd lock remove vms/a auto 139643345791729 client.4124',
      'rbd lock list --format json vms/b',
      'rbd lock list --format json vms/c',
    ],
  },
  {
    name: 'own without a storage address: every lock is foreign',
    mode: 'own',
    own: null,
    setup: (e) => e.on('rbd lock list', { stdout: ownLocks }),
    images: ['vms/a'],
    flushed: [],
    failed: [/^vms\/a: locked by client\.4123 at 10\.254\.0\.1:0\/123 \(lock "auto 139643345791728"\), client\.4124 at .*this node has no storage address/],
    held: [{ image: 'vms/a', locker: 'client.4123', address: '10.254.0.1:0/123' }, { image: 'vms/a', locker: 'client.4124', address: 'v2:10.254.0.1:0/456' }],
    ran: ['rbd lock list --format json vms/a'],
  },
  {
    name: 'force: every lock goes, foreign and own alike (fence recovery)',
    mode: 'force',
    setup: (e) => e.on('rbd lock list --format json vms/b', { stdout: foreign }).on('rbd lock list --format json vms/c', { stdout: mixed }).on('rbd lock remove', {}),
    images: ['vms/b', 'vms/c'],
    flushed: ['vms/b', 'vms/c'],
    failed: [],
    ran: [
      'rbd lock list --format json vms/b',
      'rbd lock remove vms/b auto 1 client.9',
      'rbd lock list --format json vms/c',
      'rbd lock remove vms/c tag 1 client.10',
      'rbd lock remove vms/c tag 2 client.20',
    ],
  },
  {
    name: 'no locks: flushed, nothing removed',
    mode: 'own',
    setup: (e) => e.on('rbd lock list', { stdout: '[]\n' }),
    images: ['vms/a', 'vms/b'],
    flushed: ['vms/a', 'vms/b'],
    failed: [],
    ran: ['rbd lock list --format json vms/a', 'rbd lock list --format json vms/b'],
  },
  {
    name: 'malformed JSON: that image fails (nothing removed), the next one is still flushed',
    mode: 'force',
    setup: (e) => e.on('rbd lock list --format json vms/bad', { stdout: 'rbd: garbage{' }).on('rbd lock list --format json vms/ok', { stdout: '' }),
    images: ['vms/bad', 'vms/ok'],
    flushed: ['vms/ok'],
    failed: [/^vms\/bad: rbd lock list printed malformed JSON: "rbd: garbage\{"$/],
    ran: ['rbd lock list --format json vms/bad', 'rbd lock list --format json vms/ok'],
  },
  {
    name: 'rbd missing: every image fails with the reason',
    mode: 'own',
    setup: (e) => e.on('rbd', () => Promise.reject(new ExecError('rbd lock list: spawn rbd ENOENT'))),
    images: ['vms/a'],
    flushed: [],
    failed: [/^vms\/a: rbd lock list: spawn rbd ENOENT$/],
    ran: ['rbd lock list --format json vms/a'],
  },
  {
    name: 'timeout: reported for the image',
    mode: 'own',
    setup: (e) =>
      e.on('rbd lock list', (_c, opts) => Promise.reject(new TimeoutError('rbd lock list --format json vms/a', opts.timeoutMs ?? -1))),
    images: ['vms/a'],
    flushed: [],
    failed: [/^vms\/a: rbd lock list --format json vms\/a timed out after 1234 ms$/],
    ran: ['rbd lock list --format json vms/a'],
  },
  {
    name: 'rbd exits non-zero (image absent): its last stderr line is the reason',
    mode: 'force',
    setup: (e) => e.on('rbd lock list', { exitCode: 2, stderr: 'rbd: error opening image a: (2) No such file or directory\n' }),
    images: ['vms/a'],
    flushed: [],
    failed: [/^vms\/a: rbd lock list failed: rbd: error opening image a: \(2\) No such file or directory$/],
    ran: ['rbd lock list --format json vms/a'],
  },
  {
    name: 'rbd\'s own line is the reason even when librados log lines come after it (their order varies)',
    mode: 'own',
    setup: (e) => e.on('rbd lock list', {
      exitCode: 2,
      stderr: 'unable to get monitor info from DNS SRV with service name: ceph-mon\nrbd: couldn\'t connect to the cluster!\n2026-11-26T14:57:37.360+0000 7f1e -1 monclient: get_monmap_and_config cannot identify monitors to contact\n',
    }),
    images: ['vms/a'],
    flushed: [],
    failed: [/^vms\/a: rbd lock list failed: rbd: couldn't connect to the cluster!$/],
    ran: ['rbd lock list --format json vms/a'],
  },
  {
    name: 'a removal refused: the image fails after the lock that could not be removed',
    mode: 'force',
    setup: (e) => e.on('rbd lock list', { stdout: foreign }).on('rbd lock remove', { exitCode: 1, stderr: 'rbd: releasing lock failed: (16) Device or resource busy' }),
    images: ['vms/a'],
    flushed: [],
    failed: [/^vms\/a: rbd lock remove failed: rbd: releasing lock failed: \(16\) Device or resource busy$/],
    ran: ['rbd lock list --format json vms/a', 'rbd lock remove vms/a auto 1 client.9'],
  },
  {
    name: 'bad names are refused without running rbd; duplicates are handled once',
    mode: 'own',
    setup: (e) => e.on('rbd lock list', { stdout: '[]' }),
    images: ['--pool=x/y', 'novolume', 'vms/a@snap', 'vms/a', 'vms/a'],
    flushed: ['vms/a'],
    failed: [/^--pool=x\/y: not a pool\/volume image name$/, /^novolume: not a pool/, /^vms\/a@snap: not a pool/],
    ran: ['rbd lock list --format json vms/a'],
  },
];

/** The rbd commands per image, in order: images are flushed in parallel, each one's commands in sequence. */
function perImage(lines: readonly string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const line of lines) {
    const t = line.split(' ');
    const image = (t[2] === 'list' ? t[5] : t[3]) ?? '';
    out.set(image, [...(out.get(image) ?? []), line]);
  }
  return out;
}

for (const row of table) {
  test(`flushLocks: ${row.name}`, async () => {
    const exec = new FakeExec();
    row.setup(exec);
    const r = await flushLocks(deps(exec), row.images, { mode: row.mode, ownAddress: row.own === null ? undefined : (row.own ?? OWN) });
    assert.deepEqual(r.flushed, row.flushed);
    assert.equal(r.failed.length, row.failed.length, r.failed.join('\n'));
    row.failed.forEach((re, i) => assert.match(r.failed[i] ?? '', re));
    assert.deepEqual(r.held.map(({ image, locker, address }) => ({ image, locker, address })), row.held ?? []);
    assert.deepEqual(perImage(exec.lines()), perImage(row.ran));
  });
}

test('malformed JSON and a foreign holder are each logged with the image and the reason', async () => {
  const exec = new FakeExec().on('rbd lock list --format json vms/x', { stdout: '{oops' }).on('rbd lock list --format json vms/b', { stdout: foreign });
  const log = logCapture();
  await flushLocks({ ops: cliLockOps({ exec, commandTimeoutMs: 1000 }), logger: log.logger }, ['vms/x', 'vms/b'], { mode: 'own', ownAddress: OWN });
  const bad = log.lines.find((l) => l.image === 'vms/x');
  assert.equal(bad?.msg, 'RBD lock flush failed');
  assert.equal(bad?.reason, 'rbd lock list printed malformed JSON: "{oops"');
  const held = log.lines.find((l) => l.image === 'vms/b');
  assert.equal(held?.msg, 'RBD lock held by another address: refused, left in place');
  assert.deepEqual(held?.held, [{ image: 'vms/b', lockId: 'auto 1', locker: 'client.9', address: '10.254.0.2:0/789' }]);
});

test('every rbd command gets the configured deadline and the quiet CEPH_ARGS', async () => {
  const exec = new FakeExec();
  const seen: (number | undefined)[] = [];
  const args: (string | undefined)[] = [];
  exec.on('rbd', (_c, opts) => (seen.push(opts.timeoutMs), args.push(opts.env?.['CEPH_ARGS']), { exitCode: 0, stdout: foreign, stderr: '' }));
  await flushLocks(deps(exec), ['vms/a'], { mode: 'force', ownAddress: OWN });
  assert.deepEqual(seen, [1234, 1234]);
  assert.equal(args.length, 2);
  for (const a of args) assert.match(a ?? '', /--log_to_stderr=false --err_to_stderr=false$/);
});

test('flushLocks works on up to FLUSH_PARALLEL_IMAGES images at once', async () => {
  let inFlight = 0;
  let most = 0;
  const exec = new FakeExec().on('rbd lock list', async () => {
    most = Math.max(most, ++inFlight);
    await new Promise((r) => setImmediate(r));
    inFlight -= 1;
    return { exitCode: 0, stdout: '[]', stderr: '' };
  });
  const images = Array.from({ length: 9 }, (_, i) => `vms/img${i}`);
  const r = await flushLocks(deps(exec), images, { mode: 'force', ownAddress: OWN });
  assert.deepEqual(r.flushed, images);
  assert.equal(most, FLUSH_PARALLEL_IMAGES);
});
