import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '@pvc/runtime';
import { StartJobs } from './start-jobs.js';

/** A job that takes `ms` of virtual time, then fails when `fail`. */
const job = (clock: VirtualClock, ms: number, fail = false) => async (): Promise<void> => {
  await clock.sleep(ms);
  if (fail) throw new Error('fake start failure');
};

describe('StartJobs', () => {
  it('runs one start per VM, at most `limit` at once; a busy VM, a full node and a cancelled one are refused', async () => {
    const clock = new VirtualClock(0);
    const s = new StartJobs({ limit: 2, clock, retryAfterMs: 1000 });
    let done = 0;
    s.onDone = () => done++;
    assert.equal(s.run('a', job(clock, 100)), 'started');
    assert.equal(s.run('a', job(clock, 100)), 'busy');
    assert.equal(s.run('b', job(clock, 100)), 'started');
    assert.equal(s.run('c', job(clock, 100)), 'full');
    assert.deepEqual([...s.busy].sort(), ['a', 'b']);
    await clock.advance(100);
    assert.deepEqual([...s.busy], []);
    assert.equal(done, 2, 'each end asks for a pass');
    assert.equal(s.peak, 2);
    s.cancel();
    assert.equal(s.run('c', job(clock, 100)), 'cancelled');
  });

  it('a failed start asks for no pass and is refused for retryAfterMs, then allowed again', async () => {
    const clock = new VirtualClock(0);
    const s = new StartJobs({ limit: 8, clock, retryAfterMs: 1000 });
    let done = 0;
    s.onDone = () => done++;
    s.run('a', job(clock, 100, true));
    await clock.advance(100);
    assert.equal(done, 0);
    assert.equal(s.run('a', job(clock, 100)), 'backoff');
    await clock.advance(1000);
    assert.equal(s.run('a', job(clock, 100)), 'started');
    await clock.advance(100);
    assert.equal(done, 1);
  });

  it('stop() cancels and waits for the jobs in progress; they see the signal', async () => {
    const clock = new VirtualClock(0);
    const s = new StartJobs({ limit: 0, clock, retryAfterMs: 0 });
    assert.equal(s.limit, 1, 'at least one');
    let sawAbort = false;
    s.run('a', async (signal) => {
      await clock.sleep(50);
      sawAbort = signal.aborted;
    });
    const stopped = s.stop();
    await clock.advance(50);
    await stopped;
    assert.equal(sawAbort, true);
    assert.deepEqual([...s.busy], []);
  });
});
