import { AbortedError } from './errors.js';
import { TimerHeap } from './timer-heap.js';

/**
 * The only source of time for logic. Real code gets {@link realClock}; tests and the simulator get a
 * {@link VirtualClock}, so a 30-second fence timeline runs in milliseconds.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms`; rejects with {@link AbortedError} when `signal` aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Calls `fn` every `ms` until the returned function is called or `signal` aborts. */
  every(ms: number, fn: () => void, signal?: AbortSignal): () => void;
}

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

/** Wall-clock time and real timers. */
export const realClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    abortable(signal, (done) => {
      const t = setTimeout(done, ms);
      return () => clearTimeout(t);
    }),
  every: (ms, fn, signal) => {
    const t = setInterval(fn, ms);
    const stop = (): void => clearInterval(t);
    signal?.addEventListener('abort', stop, { once: true });
    return stop;
  },
};

/**
 * Deterministic virtual time. Nothing happens until {@link VirtualClock.advance} or
 * {@link VirtualClock.runUntil} moves time; timers due at the same instant fire in creation order,
 * and pending promise callbacks are drained between timers so async logic interleaves predictably.
 */
export class VirtualClock implements Clock {
  private current: number;
  private seq = 0;
  private readonly timers = new TimerHeap();

  /**
   * @param startMs initial time.
   * @param flushRounds event-loop turns drained between timers (default 20). Logic that only
   *   chains promises needs one; simulations with thousands of timers pass a small number.
   */
  constructor(
    startMs = 0,
    private readonly flushRounds = 20,
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
    // A heap, not a sorted array: the simulator holds tens of thousands of timers (one deadline
    // per ZK request in flight), and inserting/cancelling in an array cost O(pending) each.
    const handle = this.timers.push({ at: this.current + Math.max(0, ms), seq: this.seq++, fire });
    return () => this.timers.remove(handle);
  }
}

/** Lets every already-queued promise continuation run (several macrotask turns' worth of microtasks). */
export async function flushMicrotasks(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((r) => setImmediate(r));
}
