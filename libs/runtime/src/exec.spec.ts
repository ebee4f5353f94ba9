// The real Exec (execa, loaded on first use) against real processes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createExec } from './exec.js';
import { TimeoutError } from './errors.js';

describe('createExec (real processes)', () => {
  const exec = createExec();

  it('run: exit code, stdout and stderr; a non-zero exit is a result', async () => {
    const r = await exec.run('sh', ['-c', 'echo out; echo err >&2; exit 3']);
    assert.deepEqual(r, { exitCode: 3, stdout: 'out\n', stderr: 'err\n' });
  });

  it('run: a timeout throws TimeoutError naming the command, secrets masked', async () => {
    await assert.rejects(exec.run('sh', ['-c', 'sleep 5', 'hunter2'], { timeoutMs: 100, secrets: ['hunter2'] }), (err: unknown) => {
      assert.ok(err instanceof TimeoutError);
      assert.match(err.message, /^sh -c sleep 5 \*\*\* timed out after 100 ms$/);
      return true;
    });
  });

  it('spawn: lines as they arrive, the exit code, and a pid once started', async () => {
    const child = exec.spawn('sh', ['-c', 'printf "a\\nb\\n"; printf c; exit 2']);
    const lines: string[] = [];
    child.onLine((l) => lines.push(l));
    assert.equal(await child.exited, 2);
    assert.deepEqual(lines, ['a', 'b']);
    assert.equal(typeof child.pid, 'number');
  });

  it('spawn: kill before the child has started still stops it', async () => {
    const child = exec.spawn('sleep', ['30']);
    child.kill('SIGTERM');
    const t0 = Date.now();
    const code = await child.exited;
    assert.ok(Date.now() - t0 < 5000, 'ended promptly');
    assert.notEqual(code, 0);
  });
});
