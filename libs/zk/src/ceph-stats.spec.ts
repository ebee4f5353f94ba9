import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cephHealthJson, cephStatsStateJson, osdStatsJson, poolStatsJson } from './ceph-stats.js';
import { ZkDataError } from './errors.js';

const K = '/ceph/health';

test("ceph health: Ceph's own JSON decodes with its checks; other fields are kept", () => {
  const raw =
    '{"status":"HEALTH_WARN","checks":{"POOL_NO_REDUNDANCY":{"severity":"HEALTH_WARN","summary":{"message":"1 pool(s) have no replicas configured","count":1},"muted":false}},"mutes":[]}';
  const h = cephHealthJson.decode(raw, K);
  assert.equal(h.status, 'HEALTH_WARN');
  assert.equal(h.checks.POOL_NO_REDUNDANCY?.summary.message, '1 pool(s) have no replicas configured');
  assert.deepEqual(JSON.parse(cephHealthJson.encode(h)), JSON.parse(raw));
  assert.deepEqual(cephHealthJson.decode('{"status":"HEALTH_OK","checks":{}}', K).checks, {});
});

test('ceph health: not JSON, no status, or a check without severity/message is bad data', () => {
  for (const raw of ['', 'HEALTH_OK', '[]', '{"checks":{}}', '{"status":"HEALTH_WARN","checks":{"X":{"summary":{}}}}']) {
    assert.throws(() => cephHealthJson.decode(raw, K), ZkDataError, raw);
  }
});

test("OSD stats: the original's placeholder '|' values decode; objects and arrays in known fields do not", () => {
  assert.equal(osdStatsJson.decode('{"uuid":"|","in":"|","node":"|"}', '/s').in, '|');
  assert.equal(osdStatsJson.decode('{"uuid":"a","up":1,"in":0,"state":"exists,up"}', '/s').in, 0);
  assert.throws(() => osdStatsJson.decode('{"in":[0]}', '/s'), ZkDataError);
  assert.throws(() => osdStatsJson.decode('"x"', '/s'), ZkDataError);
});

test('pool stats: numbers in the known fields; text there is bad data', () => {
  assert.equal(poolStatsJson.decode('{"id":1,"used_percent":0.25}', '/p').used_percent, 0.25);
  assert.throws(() => poolStatsJson.decode('{"id":"1"}', '/p'), ZkDataError);
});

test('stats state: our key round-trips; a wrong shape is bad data', () => {
  const v = { time: 1_764_000_000, stale: { health: 'ceph health: timed out after 3000 ms' }, stale_since: 1_763_999_990, node: 'hv1' };
  assert.deepEqual(cephStatsStateJson.decode(cephStatsStateJson.encode(v), '/ceph/stats_state'), v);
  assert.deepEqual(cephStatsStateJson.decode('{"time":1,"stale":{},"stale_since":null,"node":"hv2"}', '/x').stale, {});
  for (const raw of ['{}', '{"time":"1","stale":{},"stale_since":null,"node":"a"}', '{"time":1,"stale":{"a":1},"stale_since":null,"node":"a"}']) {
    assert.throws(() => cephStatsStateJson.decode(raw, '/x'), ZkDataError, raw);
  }
});
