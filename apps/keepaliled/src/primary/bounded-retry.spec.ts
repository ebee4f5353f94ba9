import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PvcError, VirtualClock } from '@pvc/runtime';
import { retryBounded, retryDelayMs, type AttemptFailure, type RetryBounds, type RetryOutcome } from './bounded-retry.js';
import { settle } from '../testing/fakes.js';

const BOUNDS: RetryBounds = { maxAttempts: 4, firstDelayMs: 500, maxDelayMs: 2_000, attemptMs: 5_000, totalMs: 8_000 };

/** Runs a retry whose attempts behave as `behave(n)` says; records when each attempt started. */
async function run(
  behave: (n: number, signal: AbortSignal) => Promise<string>,
  opts: { bounds?: RetryBounds; terminal?: (e: unknown) => boolean; abortAt?: number } = {},
): Promise<{ out: RetryOutcome<string>; starts: number[]; deadlines: number[]; failures: AttemptFailure[]; tookMs: number }> {
  const clock = new VirtualClock(0);
  const starts: number[] = [];
  const deadlines: number[] = [];
  const failures: AttemptFailure[] = [];
  const ac = new AbortController();
  if (opts.abortAt !== undefined) void clock.sleep(opts.abortAt).then(() => ac.abort());
  const p = retryBounded(clock, opts.bounds ?? BOUNDS, (a) => {
    starts.push(clock.now());
    deadlines.push(a.deadlineMs);
    return behave(a.attempt, a.signal);
  }, { signal: ac.signal, terminal: opts.terminal, onFailure: (f) => failures.push(f) });
  const { value, tookMs } = await settle(clock, p, { stepMs: 50 });
  return { out: value, starts, deadlines, failures, tookMs };
}

const never = (signal: AbortSignal): Promise<string> => new Promise((_r, reject) => signal.addEventListener('abort', () => reject(new Error('cut')), { once: true }));

test('retryDelayMs doubles from the first delay up to the cap', () => {
  assert.deepEqual([1, 2, 3, 4, 5].map((n) => retryDelayMs(BOUNDS, n)), [500, 1_000, 2_000, 2_000, 2_000]);
});

test('always failing: every attempt is made, spaced by the delay; only the retried failures carry a delay', async () => {
  const r = await run(() => Promise.reject(new Error('down')));
  assert.deepEqual(r.starts, [0, 500, 1_500, 3_500]);
  assert.deepEqual(r.failures.map((f) => f.retryInMs), [500, 1_000, 2_000, undefined]);
  assert.equal(r.out.ok, false);
  assert.ok(!r.out.ok && r.out.attempts === 4 && !r.out.aborted && r.out.elapsedMs === 3_500);
});

test('succeeds on attempt 2: the value, after one delay', async () => {
  const r = await run((n) => (n === 1 ? Promise.reject(new Error('down')) : Promise.resolve('done')));
  assert.deepEqual(r.out, { ok: true, value: 'done', attempts: 2, elapsedMs: 500 });
  assert.deepEqual(r.failures.map((f) => f.retryInMs), [500]);
});

test('hanging attempts: each is cut at its deadline, the last at what is left; the verdict comes at totalMs', async () => {
  const r = await run((_n, signal) => never(signal));
  assert.deepEqual(r.starts, [0, 5_500]);
  assert.deepEqual(r.deadlines, [5_000, 2_500]);
  assert.ok(!r.out.ok && r.out.elapsedMs === 8_000 && r.out.attempts === 2);
  assert.equal(r.tookMs, 8_000);
});

test('an attempt that ignores its signal and deadline is abandoned when the time is up', async () => {
  const r = await run(() => new Promise<string>(() => undefined));
  assert.deepEqual(r.starts, [0, 5_500]);
  assert.ok(!r.out.ok && r.out.elapsedMs === 8_000);
  assert.match(String(!r.out.ok && (r.out.error as Error).message), /timed out after 2500 ms/);
});

test('no retry when the next delay would pass the bound', async () => {
  const r = await run(() => Promise.reject(new Error('down')), { bounds: { ...BOUNDS, totalMs: 1_200 } });
  assert.deepEqual(r.starts, [0, 500]);
  assert.deepEqual(r.failures.map((f) => f.retryInMs), [500, undefined]);
});

test('a terminal error ends it at once', async () => {
  const r = await run(() => Promise.reject(new PvcError('DUTY_STOP_FAILED', 'x')), { terminal: (e) => e instanceof PvcError });
  assert.deepEqual(r.starts, [0]);
  assert.deepEqual(r.failures.map((f) => f.retryInMs), [undefined]);
});

test('the caller\'s signal ends it during a delay or an attempt: aborted', async () => {
  const inDelay = await run(() => Promise.reject(new Error('down')), { abortAt: 700 });
  assert.deepEqual(inDelay.starts, [0, 500]);
  assert.ok(!inDelay.out.ok && inDelay.out.aborted);
  assert.equal(inDelay.tookMs, 700);
  const inAttempt = await run(() => new Promise<string>(() => undefined), { abortAt: 1_000 });
  assert.ok(!inAttempt.out.ok && inAttempt.out.aborted && inAttempt.out.attempts === 1);
  assert.equal(inAttempt.tookMs, 1_000);
});
