import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeKey, nodeKeys, resetBadValueReports } from '@pvc/zk';
import { Problems } from './problems.js';
import { storedMacs } from './ops/read.js';

describe('Problems', () => {
  it('collects each bad value the key readers report, with the key and the value', () => {
    resetBadValueReports();
    const p = new Problems();
    const k = nodeKeys('hv1');
    assert.equal(decodeKey(k.memTotal, 'lots', p.logger), 0);
    assert.equal(decodeKey(k.memFree, '', p.logger), 0, 'an empty value is the fallback without a report');
    assert.equal(decodeKey(k.daemonState, 'running', p.logger), undefined);
    p.add('something else');
    assert.equal(p.list.length, 3);
    assert.match(p.list[0] ?? '', /^bad value in Zookeeper at \/nodes\/hv1\/memtotal: "lots" is not an integer; using the default$/);
    assert.match(p.list[1] ?? '', /\/nodes\/hv1\/daemonstate: "running" is not one of init\/run/);
    assert.equal(p.list[2], 'something else');
  });
});

describe('storedMacs', () => {
  it('reads the interface MACs of a stored XML, lower-cased, tolerating a broken document', () => {
    const xml = `<domain><devices><interface type='network'><mac address='52:54:00:AA:00:01'/></interface>
      <interface type="bridge"><mac  address="52:54:00:aa:00:02" /></interface></devices>`;
    assert.deepEqual(storedMacs(xml), ['52:54:00:aa:00:01', '52:54:00:aa:00:02']);
    assert.deepEqual(storedMacs('<domain type="qemu"><name>broken'), []);
  });
});
