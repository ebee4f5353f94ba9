/**
 * Fakes of the suicide peer check's ports ({@link WitnessPeers}, {@link LocalZkServer},
 * {@link WitnessEndpoint}) for unit tests, on a Clock, with knobs that may change between calls
 * and a record of every call. The simulator has its own, driven by its cluster's network.
 *
 * @module
 */
import { AbortedError, type Clock } from '@pvc/runtime';
import type { LocalZkServer, PeerCallOptions, WitnessEndpoint, WitnessHandle, WitnessPeers, ZkReach, ZkServerState } from '../ports.js';

/** A coordinator that cannot reach ZK: session down, its server not serving. */
export function cutOffReach(node: string, detail = 'connection refused (no server listening)'): ZkReach {
  return { node, sessionConnected: false, server: 'not-serving', serverDetail: detail, msSinceKeepalive: 30_000 };
}

/** A coordinator on a working quorum. */
export function healthyReach(node: string): ZkReach {
  return { node, sessionConnected: true, server: 'serving', serverDetail: 'mode follower', msSinceKeepalive: 1_000 };
}

/**
 * How a coordinator answers: a {@link ZkReach}; `hang` (no network: nothing comes back, the
 * caller's deadline ends it); `refuse` (up, nothing listening: fails at once).
 */
export type FakeAnswer = ZkReach | 'hang' | 'refuse';

/** A fake {@link WitnessPeers}: `answers` per coordinator (absent: `hang`), each after `latencyMs`. */
export class FakeWitnessPeers implements WitnessPeers {
  readonly answers = new Map<string, FakeAnswer>();
  readonly asks: { coordinator: string; at: number; deadlineMs: number }[] = [];
  latencyMs = 0;
  /** Answers arrive whatever the deadline says (a port breaking its contract). */
  ignoreDeadline = false;

  constructor(private readonly clock: Clock) {}

  /** Sets the same answer for several coordinators. */
  set(coordinators: readonly string[], answer: (c: string) => FakeAnswer): this {
    for (const c of coordinators) this.answers.set(c, answer(c));
    return this;
  }

  async ask(coordinator: string, opts: PeerCallOptions): Promise<ZkReach> {
    this.asks.push({ coordinator, at: this.clock.now(), deadlineMs: opts.deadlineMs });
    const answer = this.answers.get(coordinator) ?? 'hang';
    if (answer === 'refuse') throw new Error(`${coordinator}: connection refused`);
    const wait = answer === 'hang' ? Infinity : this.latencyMs;
    const bound = this.ignoreDeadline ? Infinity : opts.deadlineMs;
    if (Math.min(wait, bound) === Infinity) await never(opts.signal);
    else if (Math.min(wait, bound) > 0) await this.clock.sleep(Math.min(wait, bound), opts.signal);
    if (wait > bound) throw new Error(`${coordinator}: DEADLINE_EXCEEDED after ${bound} ms`);
    return { ...(answer as ZkReach) };
  }
}

function never(signal: AbortSignal | undefined): Promise<never> {
  return new Promise((_resolve, reject) => {
    if (signal?.aborted) reject(new AbortedError('witness ask', signal.reason));
    signal?.addEventListener('abort', () => reject(new AbortedError('witness ask', signal.reason)), { once: true });
  });
}

/** A fake {@link LocalZkServer}: a settable state; counts probes. */
export class FakeLocalZkServer implements LocalZkServer {
  state: ZkServerState = 'serving';
  detail = 'mode follower';
  probes = 0;

  probe(): Promise<{ state: ZkServerState; detail: string }> {
    this.probes++;
    return Promise.resolve({ state: this.state, detail: this.detail });
  }
}

/** A fake {@link WitnessEndpoint}: `failures` first attempts reject; then it keeps the handler. */
export class FakeWitnessEndpoint implements WitnessEndpoint {
  failures = 0;
  attempts = 0;
  handler: ((signal: AbortSignal) => Promise<ZkReach>) | undefined;
  closed = 0;

  serve(answer: (signal: AbortSignal) => Promise<ZkReach>): Promise<WitnessHandle> {
    this.attempts++;
    if (this.attempts <= this.failures) return Promise.reject(new Error('cannot listen on 10.0.0.1:7374: address not available'));
    this.handler = answer;
    return Promise.resolve({
      address: '10.0.0.1:7374',
      close: () => {
        this.closed++;
        this.handler = undefined;
        return Promise.resolve();
      },
    });
  }
}
