import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newLines, parseLines, splitLog } from './node-log.js';

describe('node log', () => {
  it('splits the key into lines (a trailing newline adds none)', () => {
    assert.deepEqual(splitLog(''), []);
    assert.deepEqual(splitLog('a\nb\n'), ['a', 'b']);
    assert.deepEqual(splitLog('a\n\nb'), ['a', '', 'b']);
  });

  it('finds the new lines after appends, trims, repeats and replacements', () => {
    assert.deepEqual(newLines(['a', 'b'], ['a', 'b', 'c']), ['c']);
    assert.deepEqual(newLines(['a', 'b', 'c'], ['b', 'c', 'd', 'e']), ['d', 'e']);
    assert.deepEqual(newLines(['x', 'x'], ['x', 'x', 'x']), ['x']);
    assert.deepEqual(newLines([], ['a']), ['a']);
    assert.deepEqual(newLines(['a', 'b'], ['p', 'q']), ['p', 'q']);
    assert.deepEqual(newLines(['a', 'b'], ['a', 'b']), []);
  });

  it('--lines must be a positive whole number', () => {
    assert.equal(parseLines(undefined), 10);
    assert.equal(parseLines('3'), 3);
    for (const bad of ['0', '-1', '2.5', 'x']) assert.throws(() => parseLines(bad), /--lines/);
  });
});
