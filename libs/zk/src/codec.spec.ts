import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as codec from './codec.js';
import { ZkDataError } from './errors.js';

describe('codecs (Python str() encoding)', () => {
  it('pythonFloat matches Python repr', () => {
    const cases: [number, string][] = [
      [1712345678.123456, '1712345678.123456'],
      [0.5, '0.5'],
      [1, '1.0'],
      [0, '0.0'],
      [-0, '-0.0'],
      [1.25, '1.25'],
      [100, '100.0'],
      [0.0001, '0.0001'],
      [0.00001, '1e-05'],
      [1.5e-7, '1.5e-07'],
      [1e15, '1000000000000000.0'],
      [1e16, '1e+16'],
      [1.5e16, '1.5e+16'],
      [123456789012345.6, '123456789012345.6'],
      [-2.5, '-2.5'],
      [Infinity, 'inf'],
      [-Infinity, '-inf'],
      [NaN, 'nan'],
    ];
    for (const [x, s] of cases) assert.equal(codec.pythonFloat(x), s, `repr(${x})`);
  });

  it('pyStr follows str(): None, True/False, ints, floats, text', () => {
    assert.equal(codec.pyStr(null), 'None');
    assert.equal(codec.pyStr(undefined), 'None');
    assert.equal(codec.pyStr(true), 'True');
    assert.equal(codec.pyStr(false), 'False');
    assert.equal(codec.pyStr(42), '42');
    assert.equal(codec.pyStr(0.25), '0.25');
    assert.equal(codec.pyStr(12n), '12');
    assert.equal(codec.pyStr('text'), 'text');
  });

  it('decoders are strict and name the key and the bad value', () => {
    const bad: [codec.Codec<unknown>, string][] = [
      [codec.int, '12a'],
      [codec.int, ''],
      [codec.int, '1.5'],
      [codec.int, ' 3'],
      [codec.float, 'abc'],
      [codec.float, ''],
      [codec.bool, 'true'],
      [codec.bool, 'yes'],
      [codec.strtobool, 'maybe'],
      [codec.json, '{nope'],
      [codec.json, ''],
      [codec.staticData, '8 6.1.0 debian'],
      [codec.staticData, 'x 6.1.0 debian amd64'],
      [codec.oneOf(['run', 'stop']), 'walk'],
      [codec.nullable(codec.int), 'none'],
    ];
    for (const [c, raw] of bad) {
      assert.throws(
        () => c.decode(raw, '/nodes/hv1/memtotal'),
        (e: unknown) =>
          e instanceof ZkDataError &&
          e.code === 'ZK_BAD_DATA' &&
          e.message.includes('/nodes/hv1/memtotal') &&
          e.message.includes(JSON.stringify(raw)),
        `${c.format} must reject ${JSON.stringify(raw)}`,
      );
    }
  });

  it('decoders accept the original values', () => {
    assert.equal(codec.int.decode('-12', 'k'), -12);
    assert.equal(codec.float.decode('0.0', 'k'), 0);
    assert.equal(codec.float.decode('3', 'k'), 3);
    assert.equal(codec.float.decode('1e-05', 'k'), 0.00001);
    assert.equal(codec.bool.decode('False', 'k'), false);
    assert.equal(codec.strtobool.decode('true', 'k'), true);
    assert.equal(codec.strtobool.decode('False', 'k'), false, 'strtobool is case-insensitive');
    assert.equal(codec.strtobool.encode(true), 'true');
    assert.equal(codec.nullable(codec.text).decode('None', 'k'), null);
    assert.equal(codec.nullable(codec.text).decode('10.0.0.1', 'k'), '10.0.0.1');
    assert.deepEqual(codec.spaceList.decode('a  b ', 'k'), ['a', 'b']);
    assert.deepEqual(codec.spaceList.decode('', 'k'), []);
    assert.deepEqual(codec.commaList.decode('', 'k'), []);
    assert.deepEqual(codec.commaList.decode('hv1,hv2', 'k'), ['hv1', 'hv2']);
    assert.deepEqual(codec.runningDomains.decode('0', 'k'), [], '"0" means none');
    assert.deepEqual(codec.runningDomains.decode('', 'k'), []);
    assert.deepEqual(codec.runningDomains.decode('u1 u2', 'k'), ['u1', 'u2']);
    assert.equal(codec.vniList.encode([1200, 100, 1200, 7]), '7 100 1200', 'networks_up: numeric order, each once');
    assert.equal(codec.vniList.encode([]), '');
    assert.deepEqual(codec.vniList.decode(' 1200  100 ', 'k'), [100, 1200]);
    assert.deepEqual(codec.vniList.decode('', 'k'), []);
    for (const bad of ['1x', '-1', '0100', '1.5', 'None']) assert.throws(() => codec.vniList.decode(bad, 'k'), /a space-separated list of VNIs/, bad);
    assert.throws(() => codec.vniList.encode([1.5]), RangeError);
    assert.deepEqual(codec.json.decode('{"a": 1}', 'k'), { a: 1 });
    assert.deepEqual(codec.staticData.decode('8 6.1.0-18-amd64 debian x86_64', 'k'), {
      cpuCount: 8,
      kernel: '6.1.0-18-amd64',
      os: 'debian',
      arch: 'x86_64',
    });
    assert.equal(codec.staticData.encode({ cpuCount: 4, kernel: 'k', os: 'o', arch: 'a' }), '4 k o a');
  });

  it('safeDecode returns a result instead of throwing', () => {
    assert.deepEqual(codec.safeDecode(codec.int, '7', 'k'), { ok: true, value: 7 });
    const r = codec.safeDecode(codec.int, 'seven', '/domains/u1/migration_max_downtime');
    assert.equal(r.ok, false);
    if (!r.ok) assert.equal(r.error.key, '/domains/u1/migration_max_downtime');
  });

  it('int refuses to encode non-integers', () => {
    assert.throws(() => codec.int.encode(1.5), RangeError);
  });
});
