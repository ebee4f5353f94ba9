import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '@pvc/config';
import { mutate } from '@pvc/config/testing';
import { dump } from 'js-yaml';
import { silentLogger } from '@pvc/runtime';
import { applySysctls, deviceKey, FakeSysctl, planHostInterfaces, planSysctls } from './index.js';

const configOf = (...edits: [string, unknown][]) => parseConfig(dump(mutate(...edits)), 'test.yaml');

test('planSysctls: routing, redirects, source routes, rp_filter off on cluster/upstream devices and bridges', () => {
  const plan = planSysctls(configOf(['pvc.system.configuration.networking.upstream.device', 'ens5.100']));
  const keys = plan.map((s) => `${s.key}=${s.value}`);
  assert.deepEqual(keys, [
    'net.ipv4.ip_forward=1',
    'net.ipv6.conf.all.forwarding=1',
    'net.ipv4.conf.all.send_redirects=1',
    'net.ipv4.conf.default.send_redirects=1',
    'net.ipv4.conf.all.accept_source_route=1',
    'net.ipv4.conf.default.accept_source_route=1',
    'net.ipv6.conf.all.accept_source_route=1',
    'net.ipv6.conf.default.accept_source_route=1',
    'net.ipv4.conf.ens4.rp_filter=0',
    'net.ipv4.conf.brcluster.rp_filter=0',
    'net.ipv4.conf.ens5/100.rp_filter=0',
    'net.ipv4.conf.brupstream.rp_filter=0',
  ]);
  assert.equal(deviceKey('ipv4', 'bond0.7', 'rp_filter'), 'net.ipv4.conf.bond0/7.rp_filter');
});

test('planSysctls and planHostInterfaces: nothing when networking is disabled', () => {
  const cfg = configOf(['pvc.functions.enable_networking', false], ['pvc.system.configuration.networking', undefined],
    ['pvc.cluster.networks', undefined], ['pvc.coordinator', undefined]);
  assert.deepEqual(planSysctls(cfg), []);
  assert.deepEqual(planHostInterfaces(cfg), { bridges: [], notes: [], problems: [] });
});

test('applySysctls: writes only what differs; absent keys skipped, refused writes reported, the pass goes on', async () => {
  const port = new FakeSysctl({ 'a.b': '0', 'c.d': '1', 'e.f': '1' });
  port.refuse.add('e.f');
  const r = await applySysctls(port, [
    { key: 'a.b', value: '1', reason: 'x' },
    { key: 'c.d', value: '1', reason: 'x' },
    { key: 'missing.key', value: '1', reason: 'x' },
    { key: 'e.f', value: '0', reason: 'x' },
  ], silentLogger());
  assert.deepEqual(r.map((x) => [x.key, x.outcome]), [['a.b', 'set'], ['c.d', 'unchanged'], ['missing.key', 'absent'], ['e.f', 'failed']]);
  assert.match(r[3]?.error ?? '', /permission denied/);
  assert.deepEqual(port.writes, [['a.b', '1']]);
});
