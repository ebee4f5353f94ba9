// Root: RBD locks on a real one-host Ceph (ceph-host.ts), freed by the real cephd — the built
// dist/main.js, run inside the Ceph host's network namespace (storage address 10.254.0.1: node hv1,
// by-id in the sample's storage network) and asked over its unix socket, as vmd and keepaliled ask it.
// A start (OWN_STALE) frees this node's stale lock; a lock held from 10.254.0.2 — by a real QEMU
// writing through librbd with the exclusive lock, or by `rbd lock add` — refuses the start, is
// named and left in place (vmd's start guard, over the same socket, fails the VM at once naming it),
// and QEMU keeps writing; fence recovery (FORCE) removes it. Run twice: with cephd's librados/librbd
// client (the default) and with the rbd tool (`PVC_CEPH_CLIENT=cli`, the fallback).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { CEPHD, rpcClient, type RpcClient, type CephdApi } from '@pvc/rpc';
import { waitUntil } from '../../support/wait.js';
import { logLines, startService, type ServiceProcess } from '../services/service-process.js';
import { CephHost, FOREIGN_IP, HOST_IP, requireCephBinaries } from './ceph-host.js';
import { QemuRbd } from './qemu-rbd.js';
import { cephdRbdLocks } from '../../../apps/vmd/src/storage/rbd-locks.js';
import { heldReason, RbdStartGuard } from '../../../apps/vmd/src/storage/start-guard.js';

interface Lock {
  id: string;
  locker: string;
  address: string;
}

/** What each client says when asked for the locks of an image that does not exist. */
const MISSING_IMAGE: Record<'librados' | 'cli', RegExp> = {
  librados: /^vms\/absent: lock list failed: rbd_open vms\/absent: \(2\) ENOENT \(no such image\)$/,
  cli: /^vms\/absent: rbd lock list failed: .*No such file or directory/,
};
const CLIENT_LINE: Record<'librados' | 'cli', RegExp> = {
  librados: /^Ceph client \(lock flushes, osd down, stats\): librados\/librbd in process$/,
  cli: /^Ceph client \(lock flushes, osd down, stats\): the rbd and ceph tools \(PVC_CEPH_CLIENT=cli\)$/,
};

for (const cephClient of ['librados', 'cli'] as const) {
  describe(`RBD locks on a one-host Ceph, freed by the real cephd (Ceph client: ${cephClient})`, () => {
    let ceph: CephHost;
    let cephd: ServiceProcess;
    let client: RpcClient<CephdApi>;
    const qemus: QemuRbd[] = [];

    const locks = async (image: string): Promise<Lock[]> => JSON.parse(await ceph.mustInHost('rbd', ['lock', 'list', '--format', 'json', image])) as Lock[];
    const create = (image: string): Promise<string> => ceph.mustInHost('rbd', ['create', '--size', '64M', image]);
    const flush = (images: string[], mode?: 'FLUSH_MODE_OWN_STALE' | 'FLUSH_MODE_FORCE') =>
      client.flushLocks({ images, mode: mode ?? 'FLUSH_MODE_UNSPECIFIED', deadNode: '' }, { deadlineMs: 60_000 });

    before(async () => {
      ceph = await CephHost.start();
      cephd = await startService('cephd', [
        ['pvc.functions.enable_storage', true],
        ['pvc.cluster.coordinators', ['localhost']],
      ], { ...ceph.env, PVC_CEPH_CLIENT: cephClient }, ['ip', 'netns', 'exec', ceph.hostNs]);
      client = rpcClient(cephd.target, CEPHD);
      await waitUntil(() => logLines(cephd, CLIENT_LINE[cephClient]), { what: `cephd's line naming its Ceph client (${cephClient})`, until: (l) => l.length === 1, timeoutMs: 10_000 });
    });
    after(async () => {
      for (const q of qemus) await q.stop();
      client?.close();
      await cephd?.cleanup();
      await ceph?.destroy();
    });

    test('a missing binary fails loudly, naming it and its package', () => {
      assert.throws(() => requireCephBinaries([['pvc-no-such-ceph-tool', 'ceph-imaginary']]), /missing pvc-no-such-ceph-tool \(Debian package ceph-imaginary\); run scripts\/setup\.sh/);
    });

    test('the one-host Ceph is up: start time and memory (reported)', (t) => {
      const rss = ceph.memoryKb();
      t.diagnostic(`one-host Ceph up in ${ceph.startMs} ms (mon + OSD, no mgr); RSS kB ${JSON.stringify(rss)}`);
      assert.ok(ceph.startMs < 90_000);
      assert.ok((rss['mon.a'] ?? 0) > 0 && (rss['osd.0'] ?? 0) > 0, 'mon and OSD running');
    });

    test('(a) a lock this node left (rbd lock add from its storage address) is removed by a start flush', async () => {
      await create('vms/own1');
      await ceph.mustInHost('rbd', ['lock', 'add', 'vms/own1', 'stale-own']);
      const before = await locks('vms/own1');
      assert.equal(before.length, 1);
      assert.match(before[0]?.address ?? '', new RegExp(`^${HOST_IP.replaceAll('.', '\\.')}:0/\\d+$`), 'Ceph prints IP:port/nonce');
      assert.deepEqual(await flush(['vms/own1'], 'FLUSH_MODE_OWN_STALE'), { flushed: ['vms/own1'], failed: [], held: [] });
      assert.deepEqual(await locks('vms/own1'), []);
    });

    test('(b) a real QEMU on another address holds the exclusive lock: a start flush refuses, names it, leaves it; QEMU keeps writing', async () => {
      await create('vms/q1');
      const qemu = await QemuRbd.start(ceph, ceph.foreignNs, 'vms/q1');
      qemus.push(qemu);
      assert.match(await qemu.write(0x11), /wrote 4096\/4096 bytes at offset 0/);
      const [held] = await waitUntil(() => locks('vms/q1'), { what: 'the exclusive lock of QEMU on vms/q1', timeoutMs: 20_000, until: (l) => l.length === 1 });
      assert.match(held?.id ?? '', /^auto \d+$/, 'librbd\'s managed exclusive lock');
      assert.ok(held?.address.startsWith(`${FOREIGN_IP}:`), held?.address);

      const r0 = await flush(['vms/q1'], 'FLUSH_MODE_OWN_STALE');
      for (const mode of ['FLUSH_MODE_OWN_STALE', undefined] as const) {
        const r = await flush(['vms/q1'], mode); // an older caller (no mode) gets the same refusal
        assert.deepEqual(r.flushed, [], String(mode));
        assert.deepEqual(r.held, [{ image: 'vms/q1', lockId: held?.id, locker: held?.locker, address: held?.address }]);
        assert.equal(r.failed.length, 1);
        assert.ok(r.failed[0]?.startsWith(`vms/q1: locked by ${held?.locker} at ${held?.address} (lock "${held?.id}"), not by this node (this node's storage address is ${HOST_IP})`), r.failed[0]);
      }
      // vmd's own start guard over the real socket: the VM fails at once, the reason naming QEMU's lock.
      const vmdLocks = cephdRbdLocks(join(cephd.dir, 'run'));
      try {
        const verdict = await new RbdStartGuard(vmdLocks, { maxFailures: 3 }).beforeStart('u1', ['vms/q1']);
        assert.deepEqual(verdict, { kind: 'fail', reason: heldReason(r0.held), held: r0.held });
        assert.ok(verdict.kind === 'fail' && verdict.reason.includes(`vms/q1 held by ${held?.locker} at ${held?.address} (lock "${held?.id}")`), JSON.stringify(verdict));
      } finally {
        vmdLocks.close();
      }
      assert.deepEqual(await locks('vms/q1'), [held], 'left in place');
      assert.match(await qemu.write(0x22), /wrote 4096\/4096 bytes at offset 0/, 'the live writer is not broken');
      const file = join(ceph.dir, 'q1.raw');
      await ceph.mustInHost('rbd', ['export', '--no-progress', 'vms/q1', file]);
      assert.ok(readFileSync(file).subarray(0, 4096).every((b) => b === 0x22), 'QEMU\'s second write is on the image');
      rmSync(file);
    });

    test('(b) an advisory lock from another address (rbd lock add), and shared locks of both nodes, are refused and kept', async () => {
      await create('vms/f1');
      await create('vms/m1');
      const added = await ceph.inForeign('rbd', ['lock', 'add', 'vms/f1', 'other-node']);
      assert.equal(added.code, 0, added.stderr);
      await ceph.mustInHost('rbd', ['lock', 'add', '--shared', 'pvc', 'vms/m1', 'mine']);
      assert.equal((await ceph.inForeign('rbd', ['lock', 'add', '--shared', 'pvc', 'vms/m1', 'theirs'])).code, 0);
      const [f1, m1] = [await locks('vms/f1'), await locks('vms/m1')];
      const r = await flush(['vms/f1', 'vms/m1'], 'FLUSH_MODE_OWN_STALE');
      assert.deepEqual(r.flushed, []);
      assert.deepEqual(r.held.map((h) => [h.image, h.lockId]), [['vms/f1', 'other-node'], ['vms/m1', 'theirs']]);
      assert.match(r.failed[1] ?? '', /^vms\/m1: locked by client\.\d+ at 10\.254\.0\.2:0\/\d+ \(lock "theirs"\)/);
      assert.deepEqual([await locks('vms/f1'), await locks('vms/m1')], [f1, m1], 'nothing removed, not even this node\'s shared lock');
    });

    test('(c) fence recovery (FORCE) removes every lock, QEMU\'s included; Ceph blocklists its client', async () => {
      const [held] = await locks('vms/q1');
      assert.ok(held, 'QEMU still holds vms/q1');
      const r = await flush(['vms/q1', 'vms/f1', 'vms/m1'], 'FLUSH_MODE_FORCE');
      assert.deepEqual(r, { flushed: ['vms/q1', 'vms/f1', 'vms/m1'], failed: [], held: [] });
      for (const image of ['vms/q1', 'vms/f1', 'vms/m1']) assert.deepEqual(await locks(image), [], image);
      const blocklist = await ceph.mustInHost('ceph', ['osd', 'blocklist', 'ls']);
      assert.ok(blocklist.includes(held.address), `${held.address} not in the blocklist:\n${blocklist}`);
    });

    test('memory after the lock tests (reported)', (t) => {
      t.diagnostic(`one-host Ceph RSS kB after the tests: ${JSON.stringify(ceph.memoryKb())}`);
    });

    test('bad input: a missing image fails with rbd\'s reason, a bad name is refused, the rest is flushed', async () => {
      const r = await flush(['vms/absent', '-x/y', 'vms/own1'], 'FLUSH_MODE_OWN_STALE');
      assert.deepEqual(r.flushed, ['vms/own1']);
      assert.match(r.failed[0] ?? '', MISSING_IMAGE[cephClient]);
      assert.equal(r.failed[1], '-x/y: not a pool/volume image name');
    });
  });
}
