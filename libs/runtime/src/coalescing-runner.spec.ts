import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CoalescingRunner } from './coalescing-runner.js';

/** A job whose passes end only when the test releases them; a pass returns its number. */
function gatedJob() {
  const passes: (readonly string[])[] = [];
  const gates: (() => void)[] = [];
  let running = 0;
  let maxRunning = 0;
  const work = async (reasons: readonly string[]): Promise<number> => {
    passes.push(reasons);
    const n = passes.length;
    running++;
    maxRunning = Math.max(maxRunning, running);
    await new Promise<void>((r) => gates.push(r));
    running--;
    return n;
  };
  /** Lets pending continuations run until `n` passes have started (bounded). */
  const started = async (n: number): Promise<void> => {
    for (let i = 0; i < 50 && passes.length < n; i++) await new Promise<void>((r) => setImmediate(r));
    assert.equal(passes.length, n, `expected ${n} passes to have started`);
  };
  const release = (): void => {
    const gate = gates.shift();
    assert.ok(gate, 'no pass is waiting to be released');
    gate();
  };
  return { work, passes, started, release, maxRunning: () => maxRunning };
}

test('requests during a pass are served by exactly one more pass; each gets a pass that started after it', async () => {
  const job = gatedJob();
  const runner = new CoalescingRunner(job.work);
  const first = runner.request('a');
  await job.started(1);
  const late = [runner.request('b'), runner.request('c'), runner.request('d')];
  job.release();
  assert.equal(await first, 1);
  await job.started(2);
  job.release();
  assert.deepEqual(await Promise.all(late), [2, 2, 2]);
  assert.deepEqual(job.passes, [['a'], ['b', 'c', 'd']]);
  assert.equal(job.maxRunning(), 1);
  await runner.idle();
  assert.equal(runner.busy, false);
});

test('requests in the same tick share the first pass', async () => {
  const job = gatedJob();
  const runner = new CoalescingRunner(job.work);
  const both = Promise.all([runner.request('x'), runner.request('y')]);
  await job.started(1);
  job.release();
  assert.deepEqual(await both, [1, 1]);
  assert.deepEqual(job.passes, [['x', 'y']]);
});

test('a failing pass rejects only its own requests; the next pass still runs', async () => {
  let n = 0;
  const runner = new CoalescingRunner(async () => {
    n++;
    if (n === 1) throw new Error('boom');
    return n;
  });
  await assert.rejects(runner.request('one'), /boom/);
  assert.equal(await runner.request('two'), 2);
});

test('idle waits for the running pass and the queued one', async () => {
  const job = gatedJob();
  const runner = new CoalescingRunner(job.work);
  void runner.request('a');
  await job.started(1);
  void runner.request('b');
  let idle = false;
  const waiting = runner.idle().then(() => (idle = true));
  job.release();
  await job.started(2);
  assert.equal(idle, false, 'idle before the queued pass ran');
  job.release();
  await waiting;
  assert.equal(idle, true);
  assert.equal(runner.busy, false);
});
