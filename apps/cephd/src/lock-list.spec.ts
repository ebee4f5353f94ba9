import { test } from 'node:test';
import assert from 'node:assert/strict';
import { heldFrom, lockAddressIps, parseLockList } from './lock-list.js';

const octopus = JSON.stringify([
  { id: 'auto 139643345791728', locker: 'client.4123', address: '10.0.0.1:0/123' },
  { id: 'auto 139643345791729', locker: 'client.4124', address: '10.0.0.2:0/456' },
]);
const nautilus = JSON.stringify({ 'auto 1': { locker: 'client.9', address: '10.0.0.3:0/789' } });

test('parseLockList: both Ceph layouts, empty output, and malformed output', () => {
  assert.deepEqual(parseLockList(octopus), [
    { id: 'auto 139643345791728', locker: 'client.4123', address: '10.0.0.1:0/123' },
    { id: 'auto 139643345791729', locker: 'client.4124', address: '10.0.0.2:0/456' },
  ]);
  assert.deepEqual(parseLockList(nautilus), [{ id: 'auto 1', locker: 'client.9', address: '10.0.0.3:0/789' }]);
  assert.deepEqual(parseLockList('[{"id":"x","locker":"client.1"}]'), [{ id: 'x', locker: 'client.1', address: '' }]);
  assert.deepEqual(parseLockList(''), []);
  assert.deepEqual(parseLockList('[]\n'), []);
  assert.deepEqual(parseLockList('{}'), []);
  assert.throws(() => parseLockList('[{"id": "x"'), /malformed JSON/);
  assert.throws(() => parseLockList('42'), /not a list of locks/);
  assert.throws(() => parseLockList('[{"id":"x"}]'), /without id\/locker/);
});

test('lockAddressIps: the forms Ceph prints', () => {
  const rows: [string, string[]][] = [
    ['10.254.0.1:0/2518654182', ['10.254.0.1']], // what Pacific prints (checked on the one-host Ceph)
    ['v1:10.254.0.1:0/2518654182', ['10.254.0.1']],
    ['v2:10.254.0.1:0/2518654182', ['10.254.0.1']],
    ['any:10.254.0.1:0/1', ['10.254.0.1']],
    ['[v2:10.0.0.1:3300/0,v1:10.0.0.1:6789/0]', ['10.0.0.1']],
    ['[v2:10.0.0.1:3300/0,v1:10.0.0.2:6789/0]', ['10.0.0.1', '10.0.0.2']],
    ['010.000.000.001:0/5', ['10.0.0.1']],
    ['[fd00::1]:0/123', ['fd00::1']],
    ['v2:[FD00::1]:0/123', ['fd00::1']],
    ['10.0.0.1', []], // no port: not an entity address
    ['300.0.0.1:0/1', []],
    ['', []],
    ['client.4123', []],
    ['[v2:10.0.0.1:3300/0,garbage]', []],
  ];
  for (const [address, ips] of rows) assert.deepEqual(lockAddressIps(address), ips, address);
});

test('heldFrom: own only when every IP of the address is this node\'s storage address', () => {
  const lock = (address: string) => ({ id: 'x', locker: 'client.1', address });
  assert.equal(heldFrom(lock('10.254.0.1:0/99'), '10.254.0.1'), true);
  assert.equal(heldFrom(lock('v2:10.254.0.1:0/99'), '10.254.0.1'), true);
  assert.equal(heldFrom(lock('10.254.0.10:0/99'), '10.254.0.1'), false, 'a prefix of the IP is not the IP');
  assert.equal(heldFrom(lock('10.254.0.2:0/99'), '10.254.0.1'), false);
  assert.equal(heldFrom(lock('[v2:10.254.0.1:0/9,v1:10.254.0.2:0/9]'), '10.254.0.1'), false, 'mixed vector');
  assert.equal(heldFrom(lock('10.254.0.1:0/99'), undefined), false, 'no storage address: nothing is ours');
  assert.equal(heldFrom(lock(''), '10.254.0.1'), false, 'no address: foreign');
  assert.equal(heldFrom(lock('nonsense'), '10.254.0.1'), false, 'unreadable address: foreign');
});
