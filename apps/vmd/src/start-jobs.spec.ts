import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { captureLogger, VirtualClock } from '@pvc/runtime';
import { START_BACKOFF, StartJobs, type StartRun } from './start-jobs.js';

/** A job that takes `ms` of virtual time, then fails when `fail`. */
const job = (clock: VirtualClock, ms: number, fail = false) => async (): Promise<undefined> => {
  await clock.sleep(ms);
  if (fail) throw new Error('fake start failure');
  return undefined;
};

function rig(limit: number) {
  const clock = new VirtualClock(0);
  const { logger, lines } = captureLogger('vmd');
  let done = 0;
  const s = new StartJobs({ limit, clock, logger, onDone: () => done++ });
  return { clock, s, lines, done: () => done };
}

describe('StartJobs (a WorkQueue keyed by VM)', () => {
  it('one start per VM, at most `limit` at once; the others wait for a slot (busy meanwhile); each end asks for a pass', async () => {
    const { clock, s, done } = rig(2);
    assert.equal(s.run('a', job(clock, 100)), 'started');
    assert.equal(s.run('b', job(clock, 100)), 'started');
    assert.equal(s.run('c', job(clock, 100)), 'started', 'no "full" refusal: it waits in the queue');
    assert.deepEqual([...s.busy].sort(), ['a', 'b', 'c']);
    await clock.advance(1);
    assert.equal(s.run('a', job(clock, 100)), 'busy', 'running: refused');
    await clock.advance(99);
    assert.deepEqual([...s.busy], ['c'], 'c got the slot a freed');
    await clock.advance(100);
    assert.deepEqual([...s.busy], []);
    assert.equal(done(), 3);
    assert.equal(s.peak, 2);
    s.cancel();
    assert.equal(s.run('d', job(clock, 100)), 'cancelled');
  });

  it('a start that keeps throwing is retried after 1, 2, 4, 8 … s (at most 30 s), busy all along, logged once; then works', async () => {
    const { clock, s, lines, done } = rig(8);
    const tries: { at: number; retry: boolean }[] = [];
    let failing = true;
    const flaky = async ({ retry }: StartRun): Promise<undefined> => {
      tries.push({ at: clock.now(), retry });
      await clock.sleep(100);
      if (failing) throw new Error('cephd FlushLocks failed: UNAVAILABLE');
      return undefined;
    };
    s.run('a', flaky, 'vm-a');
    for (let t = 0; t < 120_000; t += 500) {
      await clock.advance(500);
      assert.ok(s.busy.has('a'), `busy at ${clock.now()} ms (queued, running or in backoff)`);
    }
    const gaps = tries.slice(1).map((x, i) => x.at - (tries[i]?.at ?? 0) - 100);
    assert.deepEqual(gaps.slice(0, 7), [1000, 2000, 4000, 8000, 16_000, 30_000, 30_000]);
    assert.equal(Math.max(...gaps), START_BACKOFF.maxMs);
    assert.deepEqual(tries.map((x) => x.retry), [false, ...tries.slice(1).map(() => true)], 'a retry is told an earlier try threw');
    const warned = lines.filter((l) => /vm-start: failed; retrying with growing delays/.test(String(l.msg)));
    assert.equal(warned.length, 1, `logged once, not at each of ${tries.length} tries`);
    assert.deepEqual([warned[0]?.vm, warned[0]?.uuid, warned[0]?.err], ['vm-a', 'a', 'cephd FlushLocks failed: UNAVAILABLE']);
    assert.equal(done(), 0, 'a failed try asks for no pass');
    failing = false;
    await clock.advance(31_000);
    assert.deepEqual([...s.busy], []);
    assert.equal(done(), 1);
    assert.deepEqual(lines.filter((l) => /vm-start: works again/.test(String(l.msg))).map((l) => l.vm), ['vm-a']);
    assert.equal(s.failures('a'), 0);
  });

  it('a VM in backoff keeps its place but runs the latest job handed over; forget runs it at once', async () => {
    const { clock, s } = rig(8);
    const ran: string[] = [];
    s.run('a', async () => {
      ran.push('first');
      throw new Error('x');
    });
    await clock.advance(10);
    assert.deepEqual(s.inBackoff(), ['a']);
    assert.equal(s.run('a', async () => {
      ran.push('latest');
      return undefined;
    }), 'backoff');
    await clock.advance(10);
    assert.deepEqual(ran, ['first'], 'not hurried');
    s.forget('a');
    await clock.advance(1);
    assert.deepEqual(ran, ['first', 'latest']);
    assert.deepEqual([...s.busy], []);
  });

  it('a start failed for good (state fail written) is a terminal outcome: logged once as given up, not retried, not busy; a new handover starts afresh', async () => {
    const { clock, s, lines, done } = rig(8);
    let n = 0;
    const failsThenRefused = async (): Promise<string | undefined> => {
      n++;
      if (n <= 2) throw new Error('cephd FlushLocks failed: UNAVAILABLE');
      return 'Could not safely free RBD locks (3 attempts): cephd FlushLocks failed: UNAVAILABLE';
    };
    s.run('a', failsThenRefused, 'vm-a');
    await clock.advance(10_000);
    assert.equal(n, 3);
    assert.deepEqual([...s.busy], [], 'not busy: the plan sees state fail and plans nothing');
    assert.deepEqual(s.failed(), ['a']);
    assert.deepEqual(lines.filter((l) => /^vm-start: gave up/.test(String(l.msg))).map((l) => [l.vm, l.err, l.level]),
      [['vm-a', 'Could not safely free RBD locks (3 attempts): cephd FlushLocks failed: UNAVAILABLE', 50]]);
    assert.equal(lines.filter((l) => /^vm-start: works again/.test(String(l.msg))).length, 0, 'a VM failed for good did not "work again"');
    assert.equal(done(), 0);
    await clock.advance(60_000);
    assert.equal(n, 3, 'never retried');
    assert.equal(s.run('a', failsThenRefused, 'vm-a'), 'started', 'pvc vm start after the fail');
    await clock.advance(1);
    assert.equal(n, 4);
    assert.equal(s.failures('a'), 1, 'a fresh streak (the terminal one was forgotten)');
  });

  it('stop() cancels and waits for the jobs in progress; they see the signal; queued ones never run', async () => {
    const clock = new VirtualClock(0);
    const s = new StartJobs({ limit: 0, clock, logger: captureLogger('vmd').logger });
    assert.equal(s.limit, 1, 'at least one');
    let sawAbort = false;
    let second = false;
    s.run('a', async ({ signal }) => {
      await clock.sleep(50);
      sawAbort = signal.aborted;
      return undefined;
    });
    s.run('b', async () => {
      second = true;
      return undefined;
    });
    await clock.advance(1);
    const stopped = s.stop();
    await clock.advance(50);
    await stopped;
    assert.equal(sawAbort, true);
    assert.equal(second, false);
    assert.deepEqual([...s.busy], []);
  });
});
