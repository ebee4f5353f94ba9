import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OSD_STATS_FIELDS } from '@pvc/zk';
import { osdStats, parseOsdStatus } from './osd-stats.js';
import * as F from './testing/fixtures.js';

const dump = JSON.parse(F.OSD_DUMP_JSON) as unknown;
const df = JSON.parse(F.OSD_DF_JSON) as unknown;

test("the real outputs merge into the original's fields and order", () => {
  const r = osdStats(dump, df, F.OSD_STATUS, ['0']);
  assert.deepEqual(r.missing, new Map());
  const s = r.stats.get('0');
  assert.deepEqual(Object.keys(s ?? {}), [...OSD_STATS_FIELDS]);
  assert.deepEqual(s, {
    uuid: '2924c047-6c86-4582-8625-2dedecf46c1a', up: 1, in: 1, primary_affinity: 1,
    utilization: 7.08465576171875, var: 1, pgs: 9, kb: 4_194_304, kb_used: 297_152, kb_used_data: 56, kb_used_omap: 0,
    kb_used_meta: 297_088, kb_avail: 3_897_152, weight: 0.0038909912109375, reweight: 1, class: 'hdd',
    node: 'hv1', used: '290M', avail: '3805M', wr_ops: '0', wr_data: '0', rd_ops: '0', rd_data: '0', state: 'exists,up',
  });
});

test('osd status: the Ceph 16 columns, the Ceph 14 table, colours stripped, host shortened', () => {
  const ceph16 = 'ID  HOST            USED  AVAIL  WR OPS  WR DATA  RD OPS  RD DATA  STATE\n 3  hv2.p.example  2489M   236G      5     1430k      0        0   exists,up\n';
  assert.deepEqual(parseOsdStatus(ceph16).get('3'), { node: 'hv2', used: '2489M', avail: '236G', wr_ops: '5', wr_data: '1430k', rd_ops: '0', rd_data: '0', state: 'exists,up' });
  const ceph14 = [
    '+----+-------------+-------+-------+--------+---------+--------+---------+-----------+',
    '| id |     host    |  used | avail | wr ops | wr data | rd ops | rd data |   state   |',
    '+----+-------------+-------+-------+--------+---------+--------+---------+-----------+',
    '| 0  | hv1.b.u.net |  318G |  463G |  213   |  1430k  |   22   |   124k  | exists,up |',
    '+----+-------------+-------+-------+--------+---------+--------+---------+-----------+',
  ].join('\n');
  assert.deepEqual(parseOsdStatus(ceph14).get('0'), { node: 'hv1', used: '318G', avail: '463G', wr_ops: '213', wr_data: '1430k', rd_ops: '22', rd_data: '124k', state: 'exists,up' });
  assert.equal(parseOsdStatus('\x1b[1m 1  hv1  1G  2G  0  0  0  0  \x1b[32mexists,up\x1b[0m\n').get('1')?.state, 'exists,up');
});

test('osd status: a row missing its host column (a down OSD) is skipped, not shifted', () => {
  const text = 'ID  HOST  USED  AVAIL  WR OPS  WR DATA  RD OPS  RD DATA  STATE\n 2        0     0       0        0       0        0   exists,new\n';
  assert.deepEqual(parseOsdStatus(text), new Map());
  assert.deepEqual(Object.fromEntries(osdStats(dump, df, text, ['0']).missing), { 0: 'osd 0 is not in ceph osd status' });
});

test('an OSD missing from one source, or with a bad field, has no stats and says why; a missing list throws', () => {
  const badDf = { nodes: [{ ...(df as { nodes: Record<string, unknown>[] }).nodes[0], kb: null }] };
  assert.deepEqual(Object.fromEntries(osdStats(dump, badDf, F.OSD_STATUS, ['0', '5']).missing), {
    0: 'osd 0 in ceph osd df: "kb" is null',
    5: 'osd 5 is not in ceph osd dump',
  });
  assert.throws(() => osdStats({}, df, F.OSD_STATUS, ['0']), /ceph osd dump: no "osds" list/);
  assert.throws(() => osdStats(dump, { nodes: 'x' }, F.OSD_STATUS, ['0']), /ceph osd df: no "nodes" list/);
});
