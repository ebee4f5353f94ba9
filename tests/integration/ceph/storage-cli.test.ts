// Root: `pvc storage` on a real one-host Ceph 16 (with a mgr, for `ceph df`) and a real ZooKeeper,
// carried out by the real cephd (built dist/main.js, in the Ceph host's namespace, primary) through
// the request pipe under /cmd/ceph; `pvc` is run in-process against the ZooKeeper and holds no Ceph
// credentials. Each change is checked in Ceph (ceph/rbd in the Ceph namespace) and in ZooKeeper;
// refusals (a name rbd rejects, a replication Ceph rejects after the pool was made, the size guards)
// leave nothing behind in either. Run under `flock /tmp/pvc-cluster.lock`.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitUntil } from '../../support/wait.js';
import { StorageRig } from './storage-rig.js';

const MiB = 1024 ** 2;
/** Bytes of each write of the snapshot test (16 of bench's 4 KiB writes before). */
const WRITE = 64 * 1024;
/** The error line of a run: its progress lines (one per change when not on a terminal) come before it. */
const errorLine = (r: { stderr: string }): string => `${r.stderr.trimEnd().split('\n').at(-1) ?? ''}\n`;

describe('pvc storage on a real Ceph, carried out by the real cephd', () => {
  let rig: StorageRig;
  const pools = async (): Promise<string[]> => (await rig.cephJson('ceph', ['osd', 'pool', 'ls'])) as string[];
  const images = async (pool: string): Promise<string[]> => (await rig.cephJson('rbd', ['ls', pool])) as string[];
  const info = async (spec: string): Promise<{ size: number; snapshot_count: number }> => (await rig.cephJson('rbd', ['info', spec])) as { size: number; snapshot_count: number };
  const zkKeys = async (root: string): Promise<string[]> => Object.keys(await rig.dump(root)).sort();
  /** What `rbd export` reads of an image or snapshot: the SHA-256 of all of it and its first {@link WRITE} bytes. */
  const contents = async (spec: string): Promise<{ sha256: string; head: Buffer }> => {
    const file = join(rig.ceph.dir, 'export.raw');
    await rig.ceph.mustInHost('rbd', ['export', '--no-progress', spec, file]);
    const data = readFileSync(file);
    rmSync(file);
    return { sha256: createHash('sha256').update(data).digest('hex'), head: Buffer.from(data.subarray(0, WRITE)) };
  };
  let writes = 0;
  /**
   * Writes {@link WRITE} bytes at offset 0 of `spec` through librbd and returns them: a line naming
   * the write's number in this run, then random bytes, so that no two writes (nor a new, zeroed
   * image) hold the same bytes there. `rbd import-diff` of a one-extent diff (format v1,
   * doc/dev/rbd-diff.rst: header, a 'w' record of le64 offset and length, then the data, 'e'; no
   * size record, so no resize, and no snapshot records, so no snapshot made). Not `rbd bench`: in
   * Ceph 16 it fills every write with the same byte (0x67, rand() before srand) at offsets drawn
   * from srand(time(NULL)), so two benches started in the same second write the same bytes to the
   * same places; the two writes of the rollback test start ~0.95 s apart.
   */
  const write = async (spec: string): Promise<Buffer> => {
    const data = randomBytes(WRITE);
    data.write(`storage-cli write ${++writes} of pid ${process.pid}\n`, 0, 'latin1');
    const le64 = (n: number): Buffer => {
      const b = Buffer.alloc(8);
      b.writeBigUInt64LE(BigInt(n));
      return b;
    };
    const file = join(rig.ceph.dir, 'write.diff');
    writeFileSync(file, Buffer.concat([Buffer.from('rbd diff v1\n', 'latin1'), Buffer.from('w', 'latin1'), le64(0), le64(WRITE), data, Buffer.from('e', 'latin1')]));
    try {
      await rig.ceph.mustInHost('rbd', ['import-diff', '--no-progress', file, spec]);
    } finally {
      rmSync(file, { force: true });
    }
    return data;
  };

  before(async () => {
    rig = await StorageRig.start();
  });
  after(async () => {
    await rig?.destroy();
  });

  test('pool add: the pool in Ceph (size, min_size, rbd) and its object in ZooKeeper; pool list shows it', async () => {
    const t0 = Date.now();
    const out = await rig.mustPvc(['storage', 'pool', 'add', 'tp', '8', '--replcfg', 'copies=2,mincopies=1']);
    assert.equal(out, 'Created RBD pool "tp" with 8 PGs\n');
    console.log(`# pool add took ${Date.now() - t0} ms`);
    assert.ok((await pools()).includes('tp'));
    assert.equal(((await rig.cephJson('ceph', ['osd', 'pool', 'get', 'tp', 'size'])) as { size: number }).size, 2);
    assert.equal(((await rig.cephJson('ceph', ['osd', 'pool', 'get', 'tp', 'min_size'])) as { min_size: number }).min_size, 1);
    assert.deepEqual(Object.keys((await rig.cephJson('ceph', ['osd', 'pool', 'application', 'get', 'tp'])) as object), ['rbd']);
    const list = JSON.parse(await rig.mustPvc(['storage', 'pool', 'list', '--format', 'json'])) as { name: string; pgs: number; tier: string; volume_count: number }[];
    assert.deepEqual(list.map(({ name, pgs, tier, volume_count }) => ({ name, pgs, tier, volume_count })), [{ name: 'tp', pgs: 8, tier: 'default', volume_count: 0 }]);
    assert.match(await rig.mustPvc(['storage', 'pool', 'list']), /^Name +ID +Tier +PGs[^\n]*\ntp +/);
    assert.deepEqual(await rig.zk.children('/cmd/ceph'), [], 'the CLI deleted its request after reading the answer');
  });

  test('pool add whose replication Ceph refuses after the create: Ceph\'s message, the pool gone from Ceph, nothing in ZooKeeper', async () => {
    const r = await rig.pvc(['storage', 'pool', 'add', 'one', '8', '--replcfg', 'copies=1,mincopies=1']);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /^pool add one: request req-\d+ written; waiting for cephd on the primary\n/, 'progress on stderr');
    assert.equal(errorLine(r), 'pvc: pool add one failed: Error EPERM: configuring pool size as 1 is disabled by default. (while setting size 1 of pool "one"; undone: pool "one" removed)\n');
    assert.ok(!(await pools()).includes('one'));
    assert.deepEqual((await zkKeys('/ceph')).filter((k) => k.includes('/one')), []);
  });

  test('volume add, resize, rename: rbd and the volume object agree', async () => {
    assert.equal(await rig.mustPvc(['storage', 'volume', 'add', 'tp', 'v1', '64M']), 'Created RBD volume "tp/v1" of size 64M\n');
    assert.equal((await info('tp/v1')).size, 64 * MiB);
    assert.equal(await rig.mustPvc(['storage', 'volume', 'resize', 'tp', 'v1', '128M']), 'Resized RBD volume "tp/v1" to size 128M\n');
    assert.equal((await info('tp/v1')).size, 128 * MiB);
    assert.equal(await rig.mustPvc(['storage', 'volume', 'rename', 'tp', 'v1', 'v2']), 'Renamed RBD volume "v1" to "v2" in pool "tp"\n');
    assert.deepEqual(await images('tp'), ['v2']);
    const vols = JSON.parse(await rig.mustPvc(['storage', 'volume', 'list', '--pool', 'tp', '--format', 'json'])) as { name: string; stats: { size: number } }[];
    assert.deepEqual(vols.map((v) => [v.name, v.stats.size]), [['v2', 128 * MiB]]);
    assert.deepEqual(await zkKeys('/ceph/volumes/tp'), ['/ceph/volumes/tp', '/ceph/volumes/tp/v2', '/ceph/volumes/tp/v2/stats']);
  });

  test('snapshot add and rollback (needs --yes): the volume reads as at the snapshot again', async () => {
    // Each write is a finished librbd write (rbd flushes and closes the image before it exits) and
    // each rollback is answered after `rbd snap rollback` exited: the reads below follow them.
    const first = await write('tp/v2');
    assert.equal(await rig.mustPvc(['storage', 'volume', 'snapshot', 'add', 'tp', 'v2', 's1']), 'Created RBD snapshot "s1" of volume "tp/v2"\n');
    assert.equal((await info('tp/v2')).snapshot_count, 1);
    const stats = JSON.parse((await rig.dump('/ceph/volumes/tp/v2'))['/ceph/volumes/tp/v2/stats'] ?? '{}') as { snapshot_count: number };
    assert.equal(stats.snapshot_count, 1, 'the stored snapshot_count moved with it');
    const atSnapshot = await contents('tp/v2@s1');
    assert.ok(atSnapshot.head.equals(first), 'the snapshot holds the first write');
    const second = await write('tp/v2');
    const written = await contents('tp/v2');
    assert.ok(written.head.equals(second), 'the image holds the second write');
    assert.notEqual(written.sha256, atSnapshot.sha256, 'the image differs from the snapshot before the rollback');
    const refused = await rig.pvc(['storage', 'volume', 'snapshot', 'rollback', 'tp', 'v2', 's1']);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /add --yes to confirm/);
    assert.equal((await contents('tp/v2')).sha256, written.sha256, 'nothing rolled back without --yes');
    assert.equal(await rig.mustPvc(['storage', 'volume', 'snapshot', 'rollback', 'tp', 'v2', 's1', '--yes']), 'Rolled back RBD volume "tp/v2" to snapshot "s1"\n');
    const rolledBack = await contents('tp/v2');
    assert.ok(rolledBack.head.equals(first), 'the first write is back');
    assert.equal(rolledBack.sha256, atSnapshot.sha256);
    const snaps = JSON.parse(await rig.mustPvc(['storage', 'volume', 'snapshot', 'list', '-p', 'tp', '--format', 'json'])) as { snapshot: string; volume: string }[];
    assert.deepEqual(snaps.map((s) => `${s.volume}@${s.snapshot}`), ['v2@s1']);
  });

  test('clone, and three requests from three CLIs at once: each carried out once', async () => {
    const runs = await Promise.all(['c1', 'c2', 'c3'].map((n) => rig.pvc(['storage', 'volume', 'clone', 'tp', 'v2', n])));
    for (const r of runs) assert.equal(r.code, 0, r.stderr);
    assert.deepEqual((await images('tp')).sort(), ['c1', 'c2', 'c3', 'v2']);
    assert.equal((await info('tp/c1')).size, 128 * MiB);
    assert.deepEqual(await rig.zk.children('/cmd/ceph'), []);
  });

  test('a volume name rbd refuses: rbd\'s own message, nothing in Ceph or ZooKeeper', async () => {
    const name = 'x'.repeat(2100);
    const r = await rig.pvc(['storage', 'volume', 'add', 'tp', name, '16M']);
    assert.equal(r.code, 1);
    assert.equal(errorLine(r), `pvc: volume add tp/${name} failed: rbd: create error: (36) File name too long (while creating volume "tp/${name}")\n`);
    assert.ok(!(await images('tp')).includes(name));
    assert.deepEqual((await zkKeys('/ceph/volumes/tp')).filter((k) => k.includes('xxx')), []);
  });

  test('size guards on ceph df at request time: larger than the free space refused; past 80 % refused unless --force', async () => {
    const df = (await rig.cephJson('ceph', ['df'])) as { pools: { name: string; stats: { max_avail: number; bytes_used: number } }[] };
    const { max_avail: free, bytes_used: used } = df.pools.find((p) => p.name === 'tp')?.stats ?? { max_avail: 0, bytes_used: 0 };
    const huge = await rig.pvc(['storage', 'volume', 'add', 'tp', 'huge', '100G']);
    assert.equal(huge.code, 1);
    assert.match(errorLine(huge), /^pvc: volume add tp\/huge failed: the requested volume size 100G is not smaller than the free space in the pool \(\d+M\)\n$/);
    const size = String(Math.floor((used + free) * 0.8 - used + 64 * MiB));
    const big = await rig.pvc(['storage', 'volume', 'add', 'tp', 'big', size]);
    assert.equal(big.code, 1);
    assert.match(errorLine(big), /is not smaller than the safe free space in the pool \(\d+M for 80% full\); retry with --force to ignore this\n$/);
    assert.ok(!(await images('tp')).includes('big') && !(await images('tp')).includes('huge'));
    await rig.mustPvc(['storage', 'volume', 'add', 'tp', 'big', size, '--force']);
    assert.ok((await images('tp')).includes('big'));
  });

  test('removals need --yes; snapshot, volume and pool remove leave nothing in Ceph or ZooKeeper', async () => {
    const refused = await rig.pvc(['storage', 'volume', 'remove', 'tp', 'big']);
    assert.equal(refused.code, 2);
    assert.ok((await images('tp')).includes('big'), 'nothing done without --yes');
    await rig.mustPvc(['storage', 'volume', 'snapshot', 'remove', 'tp', 'v2', 's1', '--yes']);
    assert.equal((await info('tp/v2')).snapshot_count, 0);
    await rig.mustPvc(['storage', 'volume', 'snapshot', 'add', 'tp', 'v2', 's2']);
    assert.equal(await rig.mustPvc(['storage', 'volume', 'remove', 'tp', 'v2', '--yes']), 'Removed RBD volume "tp/v2"\n');
    assert.ok(!(await images('tp')).includes('v2'));
    assert.deepEqual((await zkKeys('/ceph')).filter((k) => k.includes('/v2')), []);
    assert.equal(await rig.mustPvc(['storage', 'pool', 'remove', 'tp', '--yes']), 'Removed RBD pool "tp" and all its volumes\n');
    assert.ok(!(await pools()).includes('tp'));
    assert.deepEqual((await zkKeys('/ceph')).filter((k) => k.includes('/tp')), []);
  });

  test('status and util show what cephd on the primary stored', async () => {
    await waitUntil(() => rig.dump('/ceph/util').then((d) => d['/ceph/util'] ?? ''), { what: '/ceph/util written by the stats duty', timeoutMs: 30_000, intervalMs: 500 });
    assert.match(await rig.mustPvc(['storage', 'status']), /cluster:/);
    assert.match(await rig.mustPvc(['storage', 'util']), /POOLS:|--- POOLS ---/);
  });
});
