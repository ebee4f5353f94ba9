import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from './clock.js';
import { captureLogger } from './testing/log-capture.js';
import { backoffDelay, WorkQueue, type WorkOutcome, type WorkRun } from './work-queue.js';

/** Lets pending promise callbacks run (no timers move). */
async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((r) => setImmediate(r));
}

/**
 * A queue whose work is scripted per key: each run takes the next outcome of its key's script
 * (default `done`), and ends only when the test releases it if `gated` is set.
 */
function rig(opts: { concurrency?: number; maxFailures?: number; gated?: boolean } = {}) {
  const clock = new VirtualClock(0, 5);
  const { logger, lines } = captureLogger();
  const runs: { key: string; reasons: readonly string[]; failures: number; at: number }[] = [];
  const scripts = new Map<string, (WorkOutcome | Error)[]>();
  const gates: (() => void)[] = [];
  let running = 0;
  let maxRunning = 0;
  const work = async (key: string, run: WorkRun): Promise<WorkOutcome> => {
    runs.push({ key, reasons: run.reasons, failures: run.failures, at: clock.now() });
    running++;
    maxRunning = Math.max(maxRunning, running);
    if (opts.gated) await new Promise<void>((r) => gates.push(r));
    running--;
    const next = scripts.get(key)?.shift() ?? { kind: 'done' };
    if (next instanceof Error) throw next;
    return next;
  };
  const q = new WorkQueue<string>({
    name: 'test-queue', clock, logger, work, concurrency: opts.concurrency, maxFailures: opts.maxFailures,
    backoff: { initialMs: 100, maxMs: 800 },
  });
  const release = async (): Promise<void> => {
    await settle();
    const gate = gates.shift();
    assert.ok(gate, 'no run is waiting to be released');
    gate();
    await settle();
  };
  const logged = (msg: RegExp): Record<string, unknown>[] => lines.filter((l) => msg.test(String(l.msg)));
  return { clock, q, runs, scripts, release, lines, logged, maxRunning: () => maxRunning, gates };
}

test('adds of one key in the same tick merge into one run, with every reason in order', async () => {
  const r = rig();
  r.q.add('a', 'one');
  r.q.add('a', 'two');
  r.q.add('a', 'three');
  await r.q.idle();
  assert.deepEqual(r.runs, [{ key: 'a', reasons: ['one', 'two', 'three'], failures: 0, at: 0 }]);
  assert.equal(r.q.state('a'), 'idle');
});

test('an add while its key runs makes exactly one more run after it, never two at once', async () => {
  const r = rig({ gated: true });
  r.q.add('a', 'first');
  await settle();
  assert.equal(r.q.state('a'), 'running');
  r.q.add('a', 'x');
  r.q.add('a', 'y');
  await r.release();
  assert.equal(r.q.state('a'), 'running');
  await r.release();
  await r.q.idle();
  assert.deepEqual(r.runs.map((x) => x.reasons), [['first'], ['x', 'y']]);
  assert.equal(r.maxRunning(), 1);
});

test('at most `concurrency` keys run at once; the others run in the order they were added', async () => {
  const r = rig({ concurrency: 2, gated: true });
  for (const k of ['a', 'b', 'c', 'd']) r.q.add(k, 'go');
  await settle();
  assert.deepEqual(r.runs.map((x) => x.key), ['a', 'b']);
  assert.deepEqual(r.q.keys('queued'), ['c', 'd']);
  await r.release();
  assert.deepEqual(r.runs.map((x) => x.key), ['a', 'b', 'c']);
  await r.release();
  await r.release();
  await r.release();
  await r.q.idle();
  assert.deepEqual(r.runs.map((x) => x.key), ['a', 'b', 'c', 'd']);
  assert.equal(r.maxRunning(), 2);
  assert.equal(r.q.peak, 2);
});

test('a failing key is retried after growing delays, capped; adds meanwhile join the retry instead of hurrying it', async () => {
  const r = rig();
  r.scripts.set('a', [new Error('boom'), new Error('boom'), new Error('boom'), new Error('boom'), new Error('boom')]);
  r.q.add('a', 'go');
  await r.q.idle();
  assert.equal(r.q.state('a'), 'backoff');
  r.q.add('a', 'change');
  await settle();
  assert.equal(r.runs.length, 1, 'an add during backoff does not run the key early');
  await r.clock.runUntil(3000);
  await r.q.idle();
  // Delays 100, 200, 400, 800, then done.
  assert.deepEqual(r.runs.map((x) => x.at), [0, 100, 300, 700, 1500, 2300]);
  assert.deepEqual(r.runs.map((x) => x.failures), [0, 1, 2, 3, 4, 5]);
  assert.deepEqual(r.runs[1]?.reasons, ['change']);
  assert.deepEqual(r.runs[2]?.reasons, ['retry']);
  assert.equal(r.q.state('a'), 'idle');
  assert.equal(r.q.failures('a'), 0);
});

test('a failure is logged once per reason, and its recovery once; repeats only at debug', async () => {
  const r = rig();
  r.scripts.set('a', [new Error('boom'), new Error('boom'), new Error('boom'), { kind: 'retry', reason: 'other' }]);
  r.q.add('a', 'go');
  await r.clock.runUntil(5000);
  await r.q.idle();
  const warns = r.logged(/failed; retrying with growing delays/);
  assert.deepEqual(warns.map((l) => [l.err, l.failures, l.retryInMs, l.level]), [['boom', 1, 100, 40], ['other', 4, 800, 40]]);
  assert.equal(r.logged(/failed again/).length, 2);
  assert.deepEqual(r.logged(/works again/).map((l) => [l.key, l.failures, l.queue]), [['a', 4, 'test-queue']]);
});

test('a retry may name its own delay', async () => {
  const r = rig();
  r.scripts.set('a', [{ kind: 'retry', reason: 'not yet', afterMs: 1234 }]);
  r.q.add('a', 'go');
  await r.clock.runUntil(5000);
  assert.deepEqual(r.runs.map((x) => x.at), [0, 1234]);
});

test('a terminal outcome parks the key: adds are ignored until forget', async () => {
  const r = rig();
  r.scripts.set('a', [{ kind: 'terminal', reason: 'bad input' }]);
  r.q.add('a', 'go');
  await r.q.idle();
  assert.equal(r.q.state('a'), 'failed');
  assert.equal(r.q.add('a', 'again'), 'failed');
  await r.clock.runUntil(10_000);
  assert.equal(r.runs.length, 1);
  assert.deepEqual(r.logged(/gave up/).map((l) => [l.err, l.level]), [['bad input', 50]]);
  r.q.forget('a');
  assert.equal(r.q.add('a', 'fixed'), 'queued');
  await r.q.idle();
  assert.deepEqual(r.runs.map((x) => x.reasons), [['go'], ['fixed']]);
});

test('maxFailures failures in a row give the key up', async () => {
  const r = rig({ maxFailures: 3 });
  r.scripts.set('a', [new Error('x'), new Error('x'), new Error('x'), new Error('x')]);
  r.q.add('a', 'go');
  await r.clock.runUntil(10_000);
  assert.equal(r.runs.length, 3);
  assert.equal(r.q.state('a'), 'failed');
  assert.equal(r.logged(/gave up/).length, 1);
});

test('forget during backoff runs the key at once with a fresh streak', async () => {
  const r = rig();
  r.scripts.set('a', [new Error('x')]);
  r.q.add('a', 'go');
  await r.q.idle();
  r.q.add('a', 'pending');
  r.q.forget('a');
  await r.q.idle();
  assert.deepEqual(r.runs.map((x) => [x.at, x.failures, x.reasons]), [[0, 0, ['go']], [0, 0, ['pending']]]);
});

test('forget during backoff with nothing added meanwhile runs the key at once as a retry', async () => {
  const r = rig();
  r.scripts.set('a', [new Error('x')]);
  r.q.add('a', 'go');
  await r.q.idle();
  r.q.forget('a');
  await r.q.idle();
  assert.deepEqual(r.runs.map((x) => [x.at, x.failures, x.reasons]), [[0, 0, ['go']], [0, 0, ['retry']]]);
});

test('done with againInMs runs the key again after that long, unless an add comes first', async () => {
  const r = rig();
  r.scripts.set('a', [{ kind: 'done', againInMs: 1000 }, { kind: 'done', againInMs: 1000 }, { kind: 'done' }]);
  r.q.add('a', 'go');
  await r.clock.runUntil(1500);
  r.q.add('a', 'event');
  await r.clock.runUntil(10_000);
  assert.deepEqual(r.runs.map((x) => [x.at, x.reasons]), [[0, ['go']], [1000, ['again']], [1500, ['event']]]);
});

test('stop aborts running work, cancels timers and runs nothing more', async () => {
  const r = rig({ gated: true });
  r.q.add('a', 'go');
  r.q.add('b', 'go');
  await settle();
  let aborted = false;
  const stopped = r.q.stop().then(() => (aborted = true));
  await settle();
  assert.equal(aborted, false, 'stop waits for the running work');
  await r.release();
  await stopped;
  assert.deepEqual(r.q.keys('queued', 'running', 'backoff', 'failed'), [], 'nothing is left queued or waiting');
  assert.equal(r.q.add('b', 'late'), 'idle');
  await r.clock.runUntil(10_000);
  assert.deepEqual(r.runs.map((x) => x.key), ['a']);
});

test('backoffDelay grows by the factor and stops at maxMs', () => {
  const b = { initialMs: 250, maxMs: 30_000, factor: 3 };
  assert.deepEqual([1, 2, 3, 4, 5, 6].map((n) => backoffDelay(b, n)), [250, 750, 2250, 6750, 20_250, 30_000]);
});
