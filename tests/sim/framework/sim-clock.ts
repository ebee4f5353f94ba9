import { AbortedError, flushMicrotasks, type Clock } from '@pvc/runtime';
import { TimerHeap, type TimerHandle } from './timer-heap.js';

/**
 * The simulator's virtual time: the contract of `VirtualClock` (`@pvc/runtime`) — nothing happens
 * until {@link SimClock.advance} moves time; timers due at the same instant fire in creation order; pending
 * promise callbacks are drained (`flushRounds` event-loop turns) before the first timer and after
 * each — with its timers in a {@link TimerHeap}. VirtualClock keeps them in a sorted array (O(n)
 * per sleep and per cancel); a simulated cluster holds one timer per ZK request in flight (its
 * deadline, cancelled when the answer comes), tens of thousands at once when every vmd reads its
 * VMs' keys, which made the simulator's cost grow with the square of that. The same timers fire in
 * the same order at the same instants, so the event logs do not change.
 */
export class SimClock implements Clock {
  private current: number;
  private seq = 0;
  private readonly timers = new TimerHeap();

  constructor(
    startMs: number,
    private readonly flushRounds: number,
  ) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return abortable(signal, (done) => this.schedule(ms, done));
  }

  every(ms: number, fn: () => void, signal?: AbortSignal): () => void {
    let stopped = false;
    let cancel = (): void => undefined;
    const tick = (): void => {
      if (stopped) return;
      cancel = this.schedule(ms, tick);
      fn();
    };
    cancel = this.schedule(ms, tick);
    const stop = (): void => {
      stopped = true;
      cancel();
    };
    signal?.addEventListener('abort', stop, { once: true });
    return stop;
  }

  /** Number of timers not yet fired. */
  pending(): number {
    return this.timers.size;
  }

  /** Moves time forward by `ms`, firing every timer that falls due, in order. */
  async advance(ms: number): Promise<void> {
    await this.runUntil(this.current + ms);
  }

  /** Fires timers in time order until none is due at or before `target`, then sets now = target. */
  async runUntil(target: number): Promise<void> {
    await flushMicrotasks(this.flushRounds);
    for (;;) {
      const next = this.timers.peek();
      if (next === undefined || next.at > target) break;
      this.timers.pop();
      this.current = Math.max(this.current, next.at);
      next.fire();
      await flushMicrotasks(this.flushRounds);
    }
    this.current = Math.max(this.current, target);
  }

  private schedule(ms: number, fire: () => void): () => void {
    const handle: TimerHandle = this.timers.push({ at: this.current + Math.max(0, ms), seq: this.seq++, fire });
    return () => this.timers.remove(handle);
  }
}

/** A promise settled by `start`'s `done`, or rejected with AbortedError when `signal` aborts first (as VirtualClock's). */
function abortable(signal: AbortSignal | undefined, start: (done: () => void) => () => void): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new AbortedError('sleep', signal.reason));
      return;
    }
    let cancel: () => void = () => undefined;
    const onAbort = (): void => {
      cancel();
      reject(new AbortedError('sleep', signal?.reason));
    };
    cancel = start(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
