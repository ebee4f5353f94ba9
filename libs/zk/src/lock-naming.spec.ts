import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findPredecessor, sortContenders } from './lock-naming.js';

const U = (c: string) => c.repeat(32);

describe('kazoo lock naming and ordering', () => {
  const me = (kind: '__lock__' | '__rlock__', seq: string) => ({ node: `${U('f')}${kind}${seq}`, prefix: `${U('f')}${kind}` });

  it('Lock waits on the nearest earlier __lock__ and ignores readers and strangers', () => {
    const { node, prefix } = me('__lock__', '0000000005');
    const kids = [`${U('a')}__lock__0000000001`, `${U('b')}__rlock__0000000004`, `${U('c')}__lock__0000000003`, 'junk', node];
    assert.equal(findPredecessor(kids, node, prefix, 'exclusive'), `${U('c')}__lock__0000000003`);
  });

  it('WriteLock also waits on earlier readers', () => {
    const { node, prefix } = me('__lock__', '0000000005');
    const kids = [`${U('a')}__lock__0000000001`, `${U('b')}__rlock__0000000004`, node, `${U('d')}__rlock__0000000006`];
    assert.equal(findPredecessor(kids, node, prefix, 'write'), `${U('b')}__rlock__0000000004`);
  });

  it('ReadLock is granted beside readers, blocked by earlier writers only', () => {
    const { node, prefix } = me('__rlock__', '0000000005');
    assert.equal(findPredecessor([`${U('b')}__rlock__0000000004`, node], node, prefix, 'read'), undefined);
    const kids = [`${U('b')}__rlock__0000000004`, `${U('w')}__lock__0000000002`, node, `${U('x')}__lock__0000000007`];
    assert.equal(findPredecessor(kids, node, prefix, 'read'), `${U('w')}__lock__0000000002`);
  });

  it('reports a vanished own node', () => {
    const { node, prefix } = me('__lock__', '0000000005');
    assert.equal(findPredecessor([`${U('a')}__lock__0000000001`], node, prefix, 'exclusive'), 'self-missing');
  });

  it('compares sequences as text like kazoo (an overflowed negative sequence sorts first)', () => {
    const { node, prefix } = me('__lock__', '0000000001');
    const neg = `${U('n')}__lock__-2147483648`;
    assert.equal(findPredecessor([neg, node], node, prefix, 'exclusive'), neg);
    // kazoo's pattern wants exactly 10 digits: a 9-digit negative is not a contender.
    assert.equal(findPredecessor([`${U('n')}__lock__-000000001`, node], node, prefix, 'exclusive'), undefined);
    assert.deepEqual(sortContenders([node, 'junk', `${U('r')}__rlock__0000000000`, neg]), [
      neg,
      `${U('r')}__rlock__0000000000`,
      node,
    ]);
  });
});
