import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import zookeeper, { type Client } from 'node-zookeeper-client';
import type { Clock } from '@pvc/runtime';
import { watchReadTimeout } from './read-timeout.js';

/** A clock whose sleeps end only when the test says, at the time the test sets (a blocked loop wakes late). */
class SteppedClock implements Clock {
  t = 0;
  private waiting: (() => void) | undefined;
  now(): number {
    return this.t;
  }
  sleep(_ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting = resolve;
      signal?.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
    });
  }
  every(): () => void {
    throw new Error('not used');
  }
  /** Wakes the check loop at `t` and lets it run. */
  async wakeAt(t: number): Promise<void> {
    this.t = t;
    const w = this.waiting;
    this.waiting = undefined;
    w?.();
    await new Promise((r) => setImmediate(r));
  }
}

class FakeSocket extends EventEmitter {
  connecting = false;
  destroyed: string | undefined;
  destroy(err?: Error): void {
    this.destroyed = err?.message ?? 'destroyed';
  }
}

function rig(opts: { answerProbes?: boolean } = {}) {
  const clock = new SteppedClock();
  const socket = new FakeSocket();
  const probes: number[] = [];
  const client = {
    connectionManager: { socket },
    getSessionTimeout: () => 10_000,
    getState: () => zookeeper.State.SYNC_CONNECTED,
    // A fast server: the answer is read in the same millisecond as the probe goes out.
    exists: () => {
      probes.push(clock.now());
      if (opts.answerProbes) queueMicrotask(() => socket.emit('data', Buffer.alloc(88)));
    },
  } as unknown as Client;
  // deadAfter 1000 ms: the loop checks every 125 ms.
  const stop = watchReadTimeout(client, clock, () => true, { deadAfterMs: 1000 });
  return { clock, socket, probes, stop };
}

describe('watchReadTimeout: probes of an idle server', () => {
  it('an idle server answering each probe within the same millisecond is probed again and never dropped', async () => {
    const { clock, socket, probes, stop } = rig({ answerProbes: true });
    await clock.wakeAt(0);
    for (let t = 125; t <= 10_000; t += 125) await clock.wakeAt(t);
    assert.equal(socket.destroyed, undefined, 'a healthy idle server kept');
    assert.ok(probes.length >= 20, `probed every ~375 ms (${probes.length} probes in 10 s)`);
    stop();
  });

  it('an unanswered probe is not repeated, and the server is dropped after deadAfterMs', async () => {
    const { clock, socket, probes, stop } = rig();
    await clock.wakeAt(0);
    for (let t = 125; t <= 1125; t += 125) await clock.wakeAt(t);
    assert.equal(probes.length, 1);
    assert.match(socket.destroyed ?? '', /nothing read for 1125 ms/);
    stop();
  });
});

describe('watchReadTimeout: a check late after a block of the event loop', () => {
  it('drops a server silent for longer than deadAfterMs when the checks run on time', async () => {
    const { clock, socket, stop } = rig();
    await clock.wakeAt(0); // first check adopts the socket
    for (let t = 125; t <= 1125; t += 125) await clock.wakeAt(t);
    assert.match(socket.destroyed ?? '', /nothing read for 1125 ms/);
    stop();
  });

  it('a check that wakes 1.5 s late decides nothing: the answers read right after it keep the connection', async () => {
    const { clock, socket, stop } = rig();
    await clock.wakeAt(0);
    await clock.wakeAt(125);
    await clock.wakeAt(1625); // the loop was blocked 1.5 s; the server's answers wait in the socket
    assert.equal(socket.destroyed, undefined, 'deferred');
    socket.emit('data', Buffer.alloc(0)); // read once timers are done
    await clock.wakeAt(1750);
    assert.equal(socket.destroyed, undefined);
    stop();
  });

  it('never defers twice in a row: a silent server is dropped even if every check is late', async () => {
    const { clock, socket, stop } = rig();
    await clock.wakeAt(0);
    await clock.wakeAt(1500);
    assert.equal(socket.destroyed, undefined);
    await clock.wakeAt(3000);
    assert.match(socket.destroyed ?? '', /nothing read for 3000 ms/);
    stop();
  });
});
