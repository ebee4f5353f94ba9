import assert from 'node:assert/strict';
import { test } from 'node:test';
import { POOL_STATS_FIELDS } from '@pvc/zk';
import { poolStats } from './pool-stats.js';
import * as F from './testing/fixtures.js';

const cephDf = JSON.parse(F.CEPH_DF_JSON) as unknown;
const radosDf = JSON.parse(F.RADOS_DF_JSON) as unknown;

test("the real outputs merge into the original's fields, for the pools PVC knows only", () => {
  const r = poolStats(cephDf, radosDf, ['vms']);
  assert.deepEqual([...r.stats.keys()], ['vms'], 'device_health_metrics is not a PVC pool');
  const s = r.stats.get('vms');
  assert.deepEqual(Object.keys(s ?? {}), [...POOL_STATS_FIELDS]);
  assert.deepEqual(s, {
    id: 1, stored_bytes: 0, free_bytes: 3_775_935_232, used_bytes: 0, used_percent: 0, num_objects: 0, num_object_clones: 0,
    num_object_copies: 0, num_objects_missing_on_primary: 0, num_objects_unfound: 0, num_objects_degraded: 0, read_ops: 0,
    read_bytes: 0, write_ops: 0, write_bytes: 0,
  });
  assert.deepEqual(r.missing, new Map());
});

test('paired by name: rados df lists by name, ceph df by id (the original zips them by index)', () => {
  // In the real outputs rados df lists device_health_metrics first, ceph df lists vms first.
  const rados = { pools: [{ ...pool('b', 2), read_ops: 22 }, { ...pool('a', 1), read_ops: 11 }] };
  const df = { pools: [{ name: 'a', id: 1, stats: dfStats(100) }, { name: 'b', id: 2, stats: dfStats(200) }] };
  const r = poolStats(df, rados, ['a', 'b']);
  assert.deepEqual([r.stats.get('a')?.read_ops, r.stats.get('a')?.stored_bytes], [11, 100]);
  assert.deepEqual([r.stats.get('b')?.read_ops, r.stats.get('b')?.stored_bytes], [22, 200]);
});

test('a pool missing from one output, or with a field missing, has no stats and says why', () => {
  const df = { pools: [{ name: 'a', id: 1, stats: { ...dfStats(1), max_avail: 'lots' } }, { name: 'b', id: 2, stats: dfStats(2) }] };
  const r = poolStats(df, { pools: [pool('a', 1)] }, ['a', 'b', 'c']);
  assert.deepEqual([...r.stats.keys()], []);
  assert.deepEqual(Object.fromEntries(r.missing), {
    a: 'pool a in ceph df: "max_avail" is "lots"',
    b: 'pool b is not in rados df',
    c: 'pool c is not in ceph df',
  });
});

test("a document without a pools list is Ceph's output gone wrong: it throws", () => {
  assert.throws(() => poolStats({ stats: {} }, radosDf, ['vms']), /ceph df: no "pools" list/);
  assert.throws(() => poolStats(cephDf, null, ['vms']), /rados df: no "pools" list/);
});

function dfStats(stored: number): Record<string, number> {
  return { stored, objects: 1, kb_used: 1, bytes_used: 3 * stored, percent_used: 0.5, max_avail: 1000 };
}

function pool(name: string, id: number): Record<string, unknown> {
  return {
    name, id, num_object_clones: 0, num_object_copies: 0, num_objects_missing_on_primary: 0, num_objects_unfound: 0,
    num_objects_degraded: 0, read_ops: 0, read_bytes: 0, write_ops: 0, write_bytes: 0,
  };
}
