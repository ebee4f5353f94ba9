import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { logLines, newLines } from './vm-log.js';

describe('console log lines', () => {
  it('splits with a final newline ending the last line', () => {
    assert.deepEqual(logLines(''), []);
    assert.deepEqual(logLines('a\nb\n'), ['a', 'b']);
    assert.deepEqual(logLines('a\nb'), ['a', 'b']);
  });

  it('newLines: appended lines, a sliding window, no change, a replaced log', () => {
    assert.deepEqual(newLines(['a', 'b'], ['a', 'b', 'c']), ['c']);
    assert.deepEqual(newLines(['a', 'b', 'c'], ['b', 'c', 'd', 'e']), ['d', 'e']);
    assert.deepEqual(newLines(['a', 'b'], ['a', 'b']), []);
    assert.deepEqual(newLines(['a', 'b'], ['x', 'y']), ['x', 'y']);
    assert.deepEqual(newLines([], ['x']), ['x']);
    assert.deepEqual(newLines(['x', 'x'], ['x', 'x', 'x']), ['x']);
  });
});
