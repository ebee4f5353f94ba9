import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { bumpSerial, networkZone, parseAxfr, planDomains, planZoneSync, type StoredRecord, type ZoneRecord } from './zone.js';

describe('networkZone(): the rows the original inserts for a network', () => {
  test('SOA and the default NS pvc-dns.<upstream domain>', () => {
    assert.deepEqual(networkZone({ domain: 'Net100.Local.', nameServers: [] }, 'pvc.example.com'), {
      domain: 'net100.local',
      records: [
        { name: 'net100.local', ttl: 86400, type: 'SOA', content: 'nsX.pvc.example.com root.pvc.example.com 1 10800 1800 86400 86400' },
        { name: 'net100.local', ttl: 86400, type: 'NS', content: 'pvc-dns.pvc.example.com' },
      ],
    });
  });
  test("the network's name servers, one NS each, in order", () => {
    const z = networkZone({ domain: 'net100.local', nameServers: ['ns1.example.com', 'ns2.example.com'] }, 'pvc.example.com');
    assert.deepEqual(z.records.filter((r) => r.type === 'NS').map((r) => r.content), ['ns1.example.com', 'ns2.example.com']);
  });
});

describe('planDomains()', () => {
  const zone = (d: string) => networkZone({ domain: d, nameServers: [] }, 'up.local');
  const rows: [string, string[], string[], string[], string[]][] = [
    ['nothing stored: every network added', ['a.local', 'b.local'], [], ['a.local', 'b.local'], []],
    ['all there: nothing to do', ['a.local'], ['a.local'], [], []],
    ['a network gone: its domain removed', ['a.local'], ['a.local', 'old.local'], [], ['old.local']],
    ['stored names compared case-blind', ['a.local'], ['A.LOCAL'], [], []],
  ];
  for (const [name, wanted, stored, add, remove] of rows) {
    test(name, () => {
      const p = planDomains(wanted.map(zone), stored);
      assert.deepEqual(p.add.map((z) => z.domain), add);
      assert.deepEqual(p.remove, remove);
    });
  }
});

describe('parseAxfr(): dig +noall +answer', () => {
  const out = [
    'net100.local.\t600\tIN\tSOA\tnet100.local. hostmaster.net100.local. 4 1200 180 1209600 600',
    'net100.local.\t600\tIN\tNS\t10.100.0.1.',
    'Host1.net100.local.\t600\tIN\tA\t10.100.0.101',
    'host1.net100.local.\t600\tIN\tAAAA\t2001:DB8::65',
    'alias.net100.local.\t600\tIN\tCNAME\thost1.net100.local.',
    'elsewhere.other.\t600\tIN\tA\t10.9.9.9',
    'net100.local.\t600\tIN\tSOA\tnet100.local. hostmaster.net100.local. 4 1200 180 1209600 600',
    '',
  ].join('\n');
  test('A and AAAA in the zone, lowercased, without the trailing dot; complete', () => {
    assert.deepEqual(parseAxfr(out, 'net100.local'), {
      records: [
        { name: 'host1.net100.local', ttl: 600, type: 'A', content: '10.100.0.101' },
        { name: 'host1.net100.local', ttl: 600, type: 'AAAA', content: '2001:db8::65' },
      ],
      complete: true,
    });
  });
  test('a refused or failed transfer is not complete', () => {
    assert.equal(parseAxfr('; Transfer failed.\n', 'net100.local').complete, false);
    assert.equal(parseAxfr('', 'net100.local').complete, false);
  });
});

describe('planZoneSync(): transfer vs stored', () => {
  const a = (name: string, ip: string, ttl = 600): ZoneRecord => ({ name, ttl, type: 'A', content: ip });
  const s = (id: string, r: ZoneRecord): StoredRecord => ({ id, ...r });
  const rows: [string, ZoneRecord[], StoredRecord[], string[], ZoneRecord[]][] = [
    ['equal: no change', [a('h1.z', '10.0.0.1')], [s('1', a('h1.z', '10.0.0.1'))], [], []],
    ['new record: inserted', [a('h1.z', '10.0.0.1'), a('h2.z', '10.0.0.2')], [s('1', a('h1.z', '10.0.0.1'))], [], [a('h2.z', '10.0.0.2')]],
    ['vanished record: deleted', [], [s('1', a('h1.z', '10.0.0.1'))], ['1'], []],
    ['changed address: old deleted, new inserted', [a('h1.z', '10.0.0.9')], [s('1', a('h1.z', '10.0.0.1'))], ['1'], [a('h1.z', '10.0.0.9')]],
    ['changed TTL: replaced', [a('h1.z', '10.0.0.1', 300)], [s('1', a('h1.z', '10.0.0.1'))], ['1'], [a('h1.z', '10.0.0.1', 300)]],
    ['a second address of a host: added, the first kept (the original deleted it)', [a('h1.z', '10.0.0.1'), a('h1.z', '10.0.0.2')], [s('1', a('h1.z', '10.0.0.1'))], [], [a('h1.z', '10.0.0.2')]],
    ['duplicate stored rows: the extra deleted', [a('h1.z', '10.0.0.1')], [s('1', a('h1.z', '10.0.0.1')), s('2', a('h1.z', '10.0.0.1'))], ['2'], []],
    ['duplicate in the transfer: inserted once', [a('h1.z', '10.0.0.1'), a('h1.z', '10.0.0.1')], [], [], [a('h1.z', '10.0.0.1')]],
    ['empty both: no change', [], [], [], []],
  ];
  for (const [name, transferred, stored, deletes, inserts] of rows) {
    test(name, () => {
      const p = planZoneSync(transferred, stored);
      assert.deepEqual(p.deletes, deletes);
      assert.deepEqual(p.inserts, inserts);
      assert.equal(p.changed, deletes.length + inserts.length > 0);
    });
  }
});

describe('bumpSerial()', () => {
  const rows: [string, string, string][] = [
    ['the third field plus one', 'nsX.up root.up 1 10800 1800 86400 86400', 'nsX.up root.up 2 10800 1800 86400 86400'],
    ['wraps past 2^32 − 1 to 1', 'a b 4294967295 1 2 3 4', 'a b 1 1 2 3 4'],
    ['a malformed SOA is left alone', 'a b x 1 2 3 4', 'a b x 1 2 3 4'],
  ];
  for (const [name, before, after] of rows) test(name, () => assert.equal(bumpSerial(before), after));
});
