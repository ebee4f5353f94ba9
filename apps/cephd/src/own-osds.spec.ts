import assert from 'node:assert/strict';
import { test } from 'node:test';
import { silentLogger, TimeoutError, VirtualClock, FakeExec } from '@pvc/runtime';
import { FakeZkServer } from '@pvc/zk/testing';
import { createCephCli } from './host/ceph-cli.js';
import { localOsds, OSD_STATS_PLACEHOLDER, OwnOsds } from './own-osds.js';
import * as F from './stats/testing/fixtures.js';

const metadata = JSON.parse(F.OSD_METADATA_JSON) as Record<string, unknown>[];
const dump = JSON.parse(F.OSD_DUMP_JSON) as unknown;

test('local OSDs: those whose host (first label) is this node, with device, uuid and cluster fsid', () => {
  const more = [...metadata, { ...metadata[0], id: 1, hostname: 'hv2.example.net' }, { ...metadata[0], id: 2, hostname: 'hv1.example.net', bluestore_bdev_access_mode: 'blk', bluestore_bdev_devices: 'sdb' }];
  assert.deepEqual(localOsds(more, dump, 'hv1'), [
    { id: '0', device: '/var/lib/ceph/osd/ceph-0/block', dbDevice: '', fsid: '2924c047-6c86-4582-8625-2dedecf46c1a', clusterFsid: '7a623ce2-ed6b-4132-b22c-b96d482cc4a1' },
    { id: '2', device: '/dev/sdb', dbDevice: '', fsid: '', clusterFsid: '7a623ce2-ed6b-4132-b22c-b96d482cc4a1' },
  ]);
  assert.deepEqual(localOsds(metadata, dump, 'hv3'), []);
  assert.throws(() => localOsds({}, dump, 'hv1'), /ceph osd metadata: not a list/);
});

async function rig(exec: FakeExec) {
  const clock = new VirtualClock(1_764_000_000_000);
  const server = new FakeZkServer({ clock });
  const admin = await server.connect();
  const zk = await server.connect();
  await admin.ensurePath('/ceph/osds');
  const own = new OwnOsds({ zk, cli: createCephCli(exec), clock, logger: silentLogger(), node: 'hv1', commandTimeoutMs: 3_000, zkTimeoutMs: 1_000, retryMs: 5_000 });
  return { clock, admin, zk, own, close: async () => Promise.all([zk.close(), admin.close()]) };
}

const realCeph = (): FakeExec =>
  new FakeExec().on('ceph osd metadata --format json', { stdout: F.OSD_METADATA_JSON }).on('ceph osd dump --format json', { stdout: F.OSD_DUMP_JSON });

test('a missing OSD object is created whole, as osd.add writes it; a second run leaves it unchanged', async () => {
  const r = await rig(realCeph());
  try {
    assert.deepEqual(await r.own.once(), { created: ['0'], refreshed: [], unchanged: [] });
    const keys = ['', '/node', '/device', '/db_device', '/fsid', '/fsid/osd', '/fsid/cluster', '/lvm', '/lvm/vg', '/lvm/lv', '/is_split', '/stats'];
    const values = await Promise.all(keys.map((k) => r.admin.read(`/ceph/osds/0${k}`)));
    assert.deepEqual(values, [
      '', 'hv1', '/var/lib/ceph/osd/ceph-0/block', '', '2924c047-6c86-4582-8625-2dedecf46c1a', '2924c047-6c86-4582-8625-2dedecf46c1a',
      '7a623ce2-ed6b-4132-b22c-b96d482cc4a1', '', '', '', 'False', OSD_STATS_PLACEHOLDER,
    ]);
    assert.deepEqual(await r.own.once(), { created: [], refreshed: [], unchanged: ['0'] });
  } finally {
    await r.close();
  }
});

test('an existing object gets the keys that differ; stats and lvm keys are left alone', async () => {
  const r = await rig(realCeph());
  try {
    await r.admin.ensurePath('/ceph/osds/0/stats');
    await r.admin.write([['/ceph/osds/0/stats', '{"in": 1}'], ['/ceph/osds/0/node', 'hv1'], ['/ceph/osds/0/device', '/dev/old']]);
    assert.deepEqual(await r.own.once(), { created: [], refreshed: ['0'], unchanged: [] });
    assert.equal(await r.admin.read('/ceph/osds/0/device'), '/var/lib/ceph/osd/ceph-0/block');
    assert.equal(await r.admin.read('/ceph/osds/0/fsid/cluster'), '7a623ce2-ed6b-4132-b22c-b96d482cc4a1');
    assert.equal(await r.admin.read('/ceph/osds/0/stats'), '{"in": 1}');
    assert.equal(await r.admin.read('/ceph/osds/0/lvm'), undefined);
  } finally {
    await r.close();
  }
});

test('Ceph unreachable at start: retried every interval until it answers, then done', async () => {
  let up = false;
  const exec = new FakeExec().on('ceph', (c, o) => {
    if (!up) return Promise.reject(new TimeoutError(`ceph ${c.args.join(' ')}`, o.timeoutMs ?? 0));
    const out = c.args[1] === 'metadata' ? F.OSD_METADATA_JSON : F.OSD_DUMP_JSON;
    return { exitCode: 0, stdout: out, stderr: '' };
  });
  const r = await rig(exec);
  const ac = new AbortController();
  try {
    const running = r.own.run(ac.signal);
    await r.clock.advance(10_000);
    assert.equal(await r.admin.read('/ceph/osds/0'), undefined);
    up = true;
    await r.clock.advance(5_000);
    await running;
    assert.equal(await r.admin.read('/ceph/osds/0/node'), 'hv1');
    const calls = exec.calls.length;
    await r.clock.advance(20_000);
    assert.equal(exec.calls.length, calls, 'no attempt after the success');
  } finally {
    ac.abort();
    await r.close();
  }
});
