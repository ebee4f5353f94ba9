import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RawWatchEvent } from '../core/session.js';
import { FakeWatchIndex, type IndexedSession } from './fake-watch-index.js';

function session(order: number, seen: string[]): IndexedSession {
  return { order, notify: (e: RawWatchEvent) => void seen.push(`${order} ${e.type} ${e.path}`) };
}

describe('FakeWatchIndex', () => {
  it('hands a change to the sessions watching its paths, in creation order, each all the events in order', () => {
    const seen: string[] = [];
    const index = new FakeWatchIndex<IndexedSession>();
    const [s1, s2, s3] = [session(1, seen), session(2, seen), session(3, seen)];
    index.watch('/b', s3);
    index.watch('/a', s2);
    index.watch('/a', s1);
    index.dispatch([{ type: 'created', path: '/c' }, { type: 'changed', path: '/a' }, { type: 'changed', path: '/b' }]);
    assert.deepEqual(seen, [
      '1 created /c', '1 changed /a', '1 changed /b',
      '2 created /c', '2 changed /a', '2 changed /b',
      '3 created /c', '3 changed /a', '3 changed /b',
    ]);
  });

  it('hands every change to an offline session, none to an unwatched one', () => {
    const seen: string[] = [];
    const index = new FakeWatchIndex<IndexedSession>();
    const [s1, s2] = [session(1, seen), session(2, seen)];
    index.setOffline(s2, true);
    index.watch('/a', s1);
    index.unwatch('/a', s1);
    index.dispatch([{ type: 'deleted', path: '/x' }]);
    index.setOffline(s2, false);
    index.dispatch([{ type: 'deleted', path: '/y' }]);
    assert.deepEqual(seen, ['2 deleted /x']);
  });
});
