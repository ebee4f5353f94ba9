import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { captureLogger, VirtualClock } from '@pvc/runtime';
import { DnsAggregator } from './aggregator.js';
import type { AxfrPort } from './axfr.js';
import { DnsError } from './errors.js';
import type { PdnsPort } from './pdns-process.js';
import { FakeDnsStore } from './testing/fake-store.js';
import type { AggregatedNetwork, ZoneRecord } from './zone.js';

const NET: AggregatedNetwork = { vni: 100, domain: 'net100.local', server: '10.100.0.1', nameServers: [] };
const a = (host: string, ip: string): ZoneRecord => ({ name: `${host}.net100.local`, ttl: 600, type: 'A', content: ip });

function rig(networks: AggregatedNetwork[] = [NET]) {
  const clock = new VirtualClock(0);
  const store = new FakeDnsStore();
  const zones = new Map<string, ZoneRecord[] | Error>([['net100.local', [a('h1', '10.100.0.101')]]]);
  const axfr: AxfrPort = {
    transfer: (_server, domain) => {
      const z = zones.get(domain);
      return z instanceof Error || z === undefined ? Promise.reject(z ?? new DnsError('AXFR_FAILED', `AXFR of ${domain}: refused`)) : Promise.resolve(z);
    },
  };
  const pdns = { starts: 0, reloads: [] as string[], stops: 0, running: false } ;
  const pdnsPort: PdnsPort = {
    ensureRunning: () => (pdns.running ? Promise.resolve() : (pdns.starts++, (pdns.running = true), Promise.resolve())),
    reload: (d) => (pdns.reloads.push(d), Promise.resolve()),
    stop: () => (pdns.stops++, (pdns.running = false), Promise.resolve()),
  };
  const { logger, lines } = captureLogger('netd');
  const nets = { list: networks };
  const agg = new DnsAggregator({
    store, axfr, pdns: pdnsPort, networks: () => Promise.resolve(nets.list), clock, logger, upstreamDomain: 'up.local', periodMs: 10_000, retry: { firstMs: 2_000, maxMs: 8_000 },
  });
  return { clock, store, zones, pdns, agg, lines, nets };
}

describe('DnsAggregator', () => {
  test('first pass at once: schema, the domain with SOA and NS, pdns_server started, the zone filled, serial bumped, reload', async () => {
    const r = rig();
    await r.agg.start();
    await r.clock.advance(0);
    assert.equal(r.agg.passes, 1);
    assert.equal(r.store.schemaLoaded, true);
    assert.deepEqual(r.store.lines('net100.local'), [
      'h1.net100.local A 10.100.0.101',
      'net100.local NS pvc-dns.up.local',
      'net100.local SOA nsX.up.local root.up.local 2 10800 1800 86400 86400',
    ]);
    assert.equal(r.pdns.starts, 1);
    assert.deepEqual(r.pdns.reloads, ['net100.local']);
    assert.equal(r.agg.state, 'running');
    await r.agg.stop('test');
  });

  test('every period: a changed host replaced, a vanished one removed, serial bumped each time; no change → no reload', async () => {
    const r = rig();
    await r.agg.start();
    await r.clock.advance(0);
    r.zones.set('net100.local', [a('h1', '10.100.0.111'), a('h2', '10.100.0.102')]);
    await r.clock.advance(10_000);
    assert.equal(r.agg.passes, 2);
    assert.deepEqual(r.store.lines('net100.local').filter((l) => / A /.test(l)), ['h1.net100.local A 10.100.0.111', 'h2.net100.local A 10.100.0.102']);
    assert.equal(r.agg.last?.updated.get('net100.local'), 3);
    r.zones.set('net100.local', [a('h2', '10.100.0.102')]);
    await r.clock.advance(10_000);
    assert.deepEqual(r.store.lines('net100.local').filter((l) => / A /.test(l)), ['h2.net100.local A 10.100.0.102']);
    await r.clock.advance(10_000);
    assert.equal(r.agg.passes, 4);
    assert.deepEqual(r.pdns.reloads, ['net100.local', 'net100.local', 'net100.local']);
    await r.agg.stop('test');
  });

  test('a network gone: its domain removed; a failed transfer skips only that network, logged once', async () => {
    const r = rig([NET, { ...NET, vni: 200, domain: 'net200.local', server: '10.200.0.1' }]);
    await r.agg.start();
    await r.clock.advance(0);
    assert.deepEqual([...r.store.domains.keys()].sort(), ['net100.local', 'net200.local']);
    assert.match(r.agg.last?.skipped.get('net200.local') ?? '', /refused/);
    assert.ok(r.store.lines('net100.local').includes('h1.net100.local A 10.100.0.101'));
    await r.clock.advance(20_000);
    assert.equal(r.lines.filter((l) => /zone not transferred/.test(String(l.msg))).length, 1);
    r.nets.list = [NET];
    await r.clock.advance(10_000);
    assert.deepEqual([...r.store.domains.keys()], ['net100.local']);
    await r.agg.stop('test');
  });

  test('database down: an error naming coordinator.dns.database, retried after 2, 4, 8, 8 s (backoff), pdns_server not started; recovers when it is back', async () => {
    const r = rig();
    r.store.down = true;
    await r.agg.start();
    await r.clock.advance(0);
    assert.equal(r.agg.state, 'failing');
    const errors = () => r.lines.filter((l) => l.level === 50 && /coordinator\.dns\.database/.test(String(l.msg)));
    assert.equal(errors().length, 1);
    assert.match(String(errors()[0]?.msg), /^DNS aggregator pass failed: coordinator\.dns\.database: connecting .* failed: .*ECONNREFUSED.*; retrying with backoff$/);
    const attemptsAt: number[] = [];
    for (let t = 0; t < 22_000; t += 1_000) {
      const before = r.store.calls;
      await r.clock.advance(1_000);
      if (r.store.calls > before) attemptsAt.push(r.clock.now());
    }
    assert.deepEqual(attemptsAt, [2_000, 6_000, 14_000, 22_000]);
    assert.equal(r.pdns.starts, 0);
    r.store.down = false;
    await r.clock.advance(8_000);
    assert.equal(r.agg.state, 'running');
    assert.equal(r.pdns.starts, 1);
    assert.ok(r.lines.some((l) => l.msg === 'DNS aggregator running' && l.from === 'failing'));
    await r.agg.stop('test');
  });

  test('stop ends the passes and stops pdns_server; the duty starts without waiting for the database', async () => {
    const r = rig();
    r.store.down = true;
    const duty = r.agg.duty();
    assert.equal(duty.name, 'dns-aggregator');
    await duty.start();
    await r.clock.advance(0);
    await duty.stop();
    const calls = r.store.calls;
    await r.clock.advance(120_000);
    assert.equal(r.store.calls, calls);
    assert.equal(r.pdns.stops, 1);
    assert.equal(r.agg.state, 'stopped');
  });
});
