import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PrimaryRole } from '@pvc/rpc';
import { silentLogger } from '@pvc/runtime';
import { OSD_STATS_FIELDS, POOL_STATS_FIELDS } from '@pvc/zk';
import { Cephd } from '../cephd.js';
import { cephdPrimaryDuties } from '../duties.js';
import { createCephCli } from '../host/ceph-cli.js';
import { CephStatsDuty, statsCommandTimeoutMs, statsPeriodMs } from './duty.js';
import * as F from './testing/fixtures.js';
import { COMMAND_TIMEOUT_MS, hang, INTERVAL_MS, statsRig, type StatsRig } from './testing/rig.js';

const PASS_COMMANDS = [
  'ceph status', 'ceph health --format json', 'ceph df', 'ceph df --format json', 'rados df --format json',
  'ceph osd dump --format json', 'ceph osd df --format json', 'ceph osd status',
];

async function read(r: StatsRig, path: string): Promise<string | undefined> {
  return r.admin.read(path);
}

async function state(r: StatsRig): Promise<{ time: number; stale: Record<string, string>; stale_since: number | null; node: string }> {
  return JSON.parse((await read(r, '/ceph/stats_state')) ?? 'null') as { time: number; stale: Record<string, string>; stale_since: number | null; node: string };
}

test('command deadline: 3 s at the default 5 s interval, never under 1 s', () => {
  assert.equal(statsCommandTimeoutMs(5_000), 3_000);
  assert.equal(statsCommandTimeoutMs(10_000), 3_000);
  assert.equal(statsCommandTimeoutMs(4_000), 2_000);
  assert.equal(statsCommandTimeoutMs(1_000), 1_000);
  // Passes at least 5 s apart, so a 1-s keepalive still gives each command 3 s.
  assert.deepEqual([1_000, 5_000, 10_000].map(statsPeriodMs), [5_000, 5_000, 10_000]);
  assert.equal(statsCommandTimeoutMs(statsPeriodMs(1_000)), 3_000);
});

test("healthy Ceph: the takeover pass writes /ceph, health, util, pool and OSD stats with the original's fields, and a fresh state", async () => {
  const r = await statsRig();
  try {
    await r.duty.start();
    await r.clock.advance(0);
    assert.deepEqual([...r.exec.lines()].sort(), [...PASS_COMMANDS].sort(), 'each command once, in parallel');
    assert.equal(await read(r, '/ceph'), F.CEPH_STATUS);
    assert.deepEqual(JSON.parse((await read(r, '/ceph/health')) ?? ''), JSON.parse(F.CEPH_HEALTH_OK));
    assert.equal(await read(r, '/ceph/util'), F.CEPH_DF);
    const pool = JSON.parse((await read(r, '/ceph/pools/vms/stats')) ?? '') as Record<string, unknown>;
    assert.deepEqual(Object.keys(pool), [...POOL_STATS_FIELDS]);
    assert.equal(pool.id, 1);
    assert.equal(pool.free_bytes, 3_775_935_232);
    const osd = JSON.parse((await read(r, '/ceph/osds/0/stats')) ?? '') as Record<string, unknown>;
    assert.deepEqual(Object.keys(osd), [...OSD_STATS_FIELDS]);
    assert.deepEqual([osd.uuid, osd.up, osd.in, osd.weight, osd.class, osd.node, osd.used, osd.avail, osd.state],
      ['2924c047-6c86-4582-8625-2dedecf46c1a', 1, 1, 0.0038909912109375, 'hdd', 'hv1', '290M', '3805M', 'exists,up']);
    assert.deepEqual(await state(r), { time: 1_764_000_000, stale: {}, stale_since: null, node: 'hv1' });
    assert.deepEqual(r.duty.lastReport?.written, ['cluster', 'pools', 'osds']);
    // Then every interval, not before.
    await r.clock.advance(INTERVAL_MS - 1);
    assert.equal(r.exec.calls.length, PASS_COMMANDS.length);
    await r.clock.advance(1);
    assert.equal(r.exec.calls.length, 2 * PASS_COMMANDS.length);
    assert.deepEqual(r.logs(/stale|skipping/), []);
  } finally {
    await r.close();
  }
});

test('no pools or OSDs known to PVC: only the cluster commands run (the original skips `osd df`, which can hang)', async () => {
  const r = await statsRig();
  try {
    await r.admin.delete('/ceph/pools/vms');
    await r.admin.delete('/ceph/osds/0');
    await r.duty.start();
    await r.clock.advance(0);
    assert.deepEqual([...r.exec.lines()].sort(), ['ceph df', 'ceph health --format json', 'ceph status']);
    assert.deepEqual(r.duty.lastReport?.stale, {});
  } finally {
    await r.close();
  }
});

test('primary only: nothing runs while secondary; takeover starts the passes, relinquish stops them', async () => {
  const r = await statsRig();
  try {
    const role = new PrimaryRole({ service: 'cephd', logger: silentLogger(), duties: cephdPrimaryDuties({ stats: r.duty }) });
    await r.clock.advance(3 * INTERVAL_MS);
    assert.deepEqual(r.exec.calls, [], 'secondary: no Ceph command');
    assert.equal(await read(r, '/ceph/stats_state'), undefined);
    await role.set(true, 'takeover');
    await r.clock.advance(INTERVAL_MS);
    assert.equal(r.duty.passCount, 2);
    await role.set(false, 'relinquish');
    const calls = r.exec.calls.length;
    await r.clock.advance(5 * INTERVAL_MS);
    assert.equal(r.exec.calls.length, calls, 'no command after relinquish');
    assert.deepEqual(cephdPrimaryDuties(), [], 'storage disabled: no duty');
  } finally {
    await r.close();
  }
});

test('Ceph unreachable: commands time out, the keys keep their values, the state says stale (logged once), passes never overlap', async () => {
  const r = await statsRig();
  try {
    await r.duty.start();
    await r.clock.advance(0);
    const healthBefore = await read(r, '/ceph/health');
    r.exec.on('ceph', hang(r.clock)).on('rados', hang(r.clock));
    await r.clock.advance(INTERVAL_MS); // pass 2 starts and hangs
    await r.clock.advance(COMMAND_TIMEOUT_MS);
    const s = await state(r);
    assert.deepEqual(Object.keys(s.stale).sort(), ['health', 'osds', 'pools', 'status', 'util']);
    assert.equal(s.stale.health, 'ceph health --format json timed out after 3000 ms');
    assert.equal(s.stale_since, 1_764_000_008);
    assert.equal(await read(r, '/ceph/health'), healthBefore, 'last value kept, never an invented one');
    for (let i = 0; i < 4; i++) await r.clock.advance(INTERVAL_MS);
    assert.equal(r.logs(/^storage stats stale/).length, 1, 'logged once per episode');
    assert.equal((await state(r)).stale_since, 1_764_000_008, 'the episode keeps its start');
    // Recovery: logged once, state fresh.
    r.exec.on('ceph', (c) => answer(c.args)).on('rados', () => ({ exitCode: 0, stdout: F.RADOS_DF_JSON, stderr: '' }));
    await r.clock.advance(2 * INTERVAL_MS);
    assert.deepEqual((await state(r)).stale, {});
    assert.equal((await state(r)).stale_since, null);
    assert.equal(r.logs(/^storage stats current again$/).length, 1);
    assert.deepEqual(r.logs(/skipping/), [], 'a 3 s deadline fits the 5 s interval: nothing skipped');
  } finally {
    await r.close();
  }
});

test('a pass longer than the interval: the due passes are skipped (logged once), never run at once', async () => {
  const r = await statsRig();
  try {
    r.exec.on('ceph status', hang(r.clock));
    // A duty whose commands may take longer than its interval (deadline 3 s, interval 1 s).
    const fast = new CephStatsDuty({
      zk: r.zk, cli: createCephCli(r.exec), clock: r.clock, logger: r.logger, node: 'hv1',
      intervalMs: 1_000, commandTimeoutMs: 3_000, zkTimeoutMs: 1_000,
    });
    await fast.start();
    await r.clock.advance(2_999);
    assert.equal(r.exec.lines().filter((l) => l === 'ceph status').length, 1, 'one pass at a time');
    assert.equal(r.logs(/still running; skipping/).length, 1, 'the skips at 1 s and 2 s logged once');
    await r.clock.advance(1);
    assert.equal(r.exec.lines().filter((l) => l === 'ceph status').length, 2, 'the pass due when it ended runs');
    assert.equal(r.logs(/^storage stats: passes run on time again$/).length, 1);
    await fast.stop();
  } finally {
    await r.close();
  }
});

test('malformed JSON from one command: that part is stale and logged, the rest written', async () => {
  const r = await statsRig();
  try {
    r.exec.on('ceph osd df --format json', { stdout: '{"nodes": [' }).on('ceph health --format json', { stdout: '{"state":"HEALTH_OK"}' });
    await r.duty.start();
    await r.clock.advance(0);
    const rep = r.duty.lastReport;
    assert.deepEqual(Object.keys(rep?.stale ?? {}).sort(), ['health', 'osds']);
    assert.match(rep?.stale.osds ?? '', /^ceph osd df --format: malformed JSON output: /);
    assert.match(rep?.stale.health ?? '', /^ceph health: malformed JSON output \("\{\\"state\\":\\"HEALTH_OK\\"\}" is not the JSON of ceph health\)$/);
    assert.equal(await read(r, '/ceph/health'), undefined, 'health not written');
    assert.equal(await read(r, '/ceph'), F.CEPH_STATUS);
    assert.ok((await read(r, '/ceph/pools/vms/stats'))?.includes('"stored_bytes"'));
    assert.equal(await read(r, '/ceph/osds/0/stats'), undefined);
    const warn = r.logs(/^storage stats stale/);
    assert.equal(warn.length, 1);
    assert.deepEqual(Object.keys(warn[0]?.stale as object).sort(), ['health', 'osds']);
  } finally {
    await r.close();
  }
});

test('an OSD or pool PVC knows but Ceph does not report: only that object is stale', async () => {
  const r = await statsRig();
  try {
    await r.admin.ensurePath('/ceph/osds/7');
    await r.admin.ensurePath('/ceph/pools/gone');
    await r.duty.start();
    await r.clock.advance(0);
    assert.deepEqual(r.duty.lastReport?.stale, { 'osds/7': 'osd 7 is not in ceph osd dump', 'pools/gone': 'pool gone is not in ceph df' });
    assert.ok((await read(r, '/ceph/osds/0/stats'))?.includes('"kb_used_meta"'));
    assert.equal(await read(r, '/ceph/osds/7/stats'), undefined, 'nothing created for it');
  } finally {
    await r.close();
  }
});

test('stop (relinquish) aborts a hanging pass at once and nothing is written after it', async () => {
  const r = await statsRig();
  try {
    r.exec.on('ceph', hang(r.clock));
    await r.duty.start();
    await r.clock.advance(100);
    await r.duty.stop(); // resolves without the clock moving to the 3 s deadline
    await r.clock.advance(10 * INTERVAL_MS);
    assert.equal(await read(r, '/ceph/stats_state'), undefined);
    assert.equal(r.duty.passCount, 0);
    assert.equal(r.logs(/^storage stats: stopped$/).length, 1);
  } finally {
    await r.close();
  }
});

test('GetStorageStats answers from Zookeeper at once while a stats pass hangs on Ceph', async () => {
  const r = await statsRig();
  try {
    await r.admin.write([['/ceph/osds/0/node', 'hv1']]);
    r.exec.on('ceph', hang(r.clock));
    const role = new PrimaryRole({ service: 'cephd', logger: silentLogger(), duties: cephdPrimaryDuties({ stats: r.duty }) });
    const cephd = new Cephd({ node: 'hv1', storageEnabled: true, storageAddress: undefined, zk: r.zk, exec: r.exec, rados: undefined, logger: silentLogger(), role, rbdTimeoutMs: 5_000, zkTimeoutMs: 800 });
    await cephd.setPrimary(true, 'takeover');
    await r.clock.advance(100);
    assert.deepEqual(await cephd.getStorageStats(), { enabled: true, osdCount: 1 });
    await cephd.setPrimary(false, 'relinquish');
  } finally {
    await r.close();
  }
});

/** The real outputs again, by the `ceph` arguments. */
function answer(args: readonly string[]): { exitCode: number; stdout: string; stderr: string } {
  const line = args.join(' ');
  const table: [string, string][] = [
    ['osd dump --format json', F.OSD_DUMP_JSON], ['osd df --format json', F.OSD_DF_JSON], ['osd status', F.OSD_STATUS],
    ['health --format json', F.CEPH_HEALTH_OK], ['df --format json', F.CEPH_DF_JSON], ['df', F.CEPH_DF], ['status', F.CEPH_STATUS],
  ];
  const hit = table.find(([prefix]) => line.startsWith(prefix));
  return hit ? { exitCode: 0, stdout: hit[1], stderr: '' } : { exitCode: 1, stdout: '', stderr: `unknown ${line}` };
}
