import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '@pvc/runtime';
import { FakeConsoleFiles } from './files.js';
import { ConsoleFollower, MAX_READ_BYTES } from './follower.js';
import { LineTail } from './tail.js';

const P = '/logs/vm1.log';

function rig(lines = 3) {
  let t = 0;
  const files = new FakeConsoleFiles(() => ++t);
  const writes: string[] = [];
  let accept = true;
  const f = new ConsoleFollower({
    files, path: P, lines, logger: silentLogger(),
    write: (text) => {
      if (accept) writes.push(text);
      return Promise.resolve(accept);
    },
  });
  return { files, writes, f, refuse: (v: boolean) => (accept = !v) };
}

describe('LineTail', () => {
  it('keeps the last N lines, drops CR, completes a split line and a split UTF-8 character', () => {
    const t = new LineTail(2);
    t.push(Buffer.from('a\r\nb\r\nc'));
    assert.equal(t.text(), 'b\nc');
    const euro = Buffer.from('€');
    t.push(Buffer.concat([Buffer.from('d\n'), euro.subarray(0, 1)]));
    t.push(Buffer.concat([euro.subarray(1), Buffer.from('\n')]));
    assert.equal(t.text(), 'cd\n€');
    const zero = new LineTail(0);
    zero.push(Buffer.from('x\ny\n'));
    assert.equal(zero.text(), '');
  });
});

describe('ConsoleFollower', () => {
  it('missing file writes nothing; appears → last lines; unchanged → no read, no write', async () => {
    const { files, writes, f } = rig();
    await f.poll();
    assert.deepEqual(writes, []);
    files.append(P, '1\n2\n3\n4\n');
    await f.poll();
    assert.deepEqual(writes, ['2\n3\n4']);
    const reads = files.reads;
    await f.poll();
    assert.equal(files.reads, reads, 'unchanged file is not read again');
    assert.deepEqual(writes, ['2\n3\n4']);
    files.append(P, '5\n');
    await f.poll();
    assert.deepEqual(writes.at(-1), '3\n4\n5');
  });

  it('truncation and rotation start over; a refused write is retried at the next poll', async () => {
    const { files, writes, f, refuse } = rig();
    files.append(P, 'a\nb\n');
    await f.poll();
    files.truncate(P);
    files.append(P, 'c\n');
    await f.poll();
    assert.equal(writes.at(-1), 'c');
    files.rotate(P, 'new\n');
    refuse(true);
    await f.poll();
    assert.equal(writes.at(-1), 'c');
    refuse(false);
    await f.poll();
    assert.equal(writes.at(-1), 'new');
  });

  it('a file larger than the read cap: only its end is read, the cut first line dropped', async () => {
    const { files, writes, f } = rig(2);
    files.append(P, `${'x'.repeat(MAX_READ_BYTES)}\nlast1\nlast2\n`);
    await f.poll();
    assert.deepEqual(writes, ['last1\nlast2']);
  });
});
