import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ZkStat } from '../types.js';
import { ancestorsOf, buildDeleteOps, buildObjectOps, buildWriteOps, joinPath } from './write.js';

const stat = (version: number): ZkStat => ({
  version, cversion: 0, numChildren: 0, dataLength: 0, ephemeralOwner: undefined, czxid: 0n, mzxid: 0n, ctime: 0, mtime: 0,
});

describe('transaction builders', () => {
  it('write: create absent keys, set + check(v+1) present ones, in order', () => {
    const ops = buildWriteOps([['/a', '1'], ['/b', '2']], [undefined, stat(4)]);
    assert.deepEqual(ops, [
      { type: 'create', path: '/a', data: '1' },
      { type: 'set', path: '/b', data: '2' },
      { type: 'check', path: '/b', version: 5 },
    ]);
  });

  it('object: root first, parents before children, missing intermediates empty', () => {
    const ops = buildObjectOps('/domains/u1', [['tags/db/type', 'user'], ['', 'vm1'], ['xml', '<x/>']]);
    assert.deepEqual(ops.map((o) => o.path), ['/domains/u1', '/domains/u1/tags', '/domains/u1/tags/db', '/domains/u1/tags/db/type', '/domains/u1/xml']);
    assert.deepEqual(ops.map((o) => (o.type === 'create' ? o.data : '?')), ['vm1', '', '', 'user', '<x/>']);
  });

  it('delete: children before parents, version on the top node only', () => {
    const ops = buildDeleteOps(['/t', '/t/a', '/t/a/b', '/t/c'], 3);
    assert.deepEqual(ops.map((o) => o.path), ['/t/a/b', '/t/a', '/t/c', '/t']);
    assert.deepEqual(ops.map((o) => (o.type === 'delete' ? o.version : 0)), [-1, -1, -1, 3]);
  });

  it('path helpers', () => {
    assert.equal(joinPath('/', 'x'), '/x');
    assert.equal(joinPath('/a', ''), '/a');
    assert.deepEqual(ancestorsOf('/a/b/c'), ['/a', '/a/b']);
  });
});
