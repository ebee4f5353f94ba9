import type { Clock } from '@pvc/runtime';
import { describeError, withinDeadline } from '@pvc/runtime';
import type { WitnessPeers, ZkReach } from '../ports.js';
import { judgeOutage, type OutageVerdict, type PeerAnswer } from './verdict.js';

/** What the suicide watch needs: a bounded check that never rejects. */
export interface OutageCheck {
  check(signal: AbortSignal): Promise<OutageVerdict>;
}

export interface PeerCheckDeps {
  self: string;
  /** `cluster.coordinators`: the ZK ensemble. */
  coordinators: readonly string[];
  clock: Clock;
  peers: WitnessPeers;
  /** This node's own reach (asked only when it is a coordinator). */
  local: (signal: AbortSignal) => Promise<ZkReach>;
  /** The whole check's bound (`peerAskBoundMs`). */
  askBoundMs: number;
}

/**
 * Asks every other coordinator at once, and this node itself when it is one, each held to the ask
 * bound on our side (a peer that ignores its gRPC deadline cannot delay the reset), then judges
 * (`verdict.ts`). Never rejects: a failed or late answer is "no answer".
 */
export class PeerCheck implements OutageCheck {
  constructor(private readonly deps: PeerCheckDeps) {}

  async check(signal: AbortSignal): Promise<OutageVerdict> {
    const { coordinators, self, peers, askBoundMs } = this.deps;
    const ac = new AbortController();
    const stop = (): void => ac.abort(signal.reason);
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
    try {
      const answers = await Promise.all(
        coordinators.map((c) => {
          const isSelf = c === self;
          const reach = isSelf ? this.deps.local(ac.signal) : peers.ask(c, { deadlineMs: askBoundMs, signal: ac.signal });
          return this.bounded(reach).then(
            (r): PeerAnswer => ({ coordinator: c, self: isSelf, reach: r }),
            (err: unknown): PeerAnswer => ({ coordinator: c, self: isSelf, error: describeError(err) }),
          );
        }),
      );
      return judgeOutage(coordinators, answers);
    } finally {
      signal.removeEventListener('abort', stop);
      ac.abort();
    }
  }

  private bounded<T>(p: Promise<T>): Promise<T> {
    return withinDeadline(this.deps.clock, p, this.deps.askBoundMs);
  }
}
