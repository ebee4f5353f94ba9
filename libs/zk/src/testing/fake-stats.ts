/** The kinds of request a {@link FakeZkStats} counts (a single create/set/delete counts as its kind). */
export type FakeZkOpKind = 'getData' | 'exists' | 'getChildren' | 'create' | 'set' | 'delete' | 'multi';

/** A copy of the counters at one moment. */
export interface FakeZkStatsSnapshot {
  /** Requests that reached the server, by kind. */
  ops: Record<FakeZkOpKind, number>;
  /** Sum of {@link ops}. */
  totalOps: number;
  /** Watch notifications delivered: one per session and changed path that fired a watch. */
  notifications: number;
}

const KINDS: readonly FakeZkOpKind[] = ['getData', 'exists', 'getChildren', 'create', 'set', 'delete', 'multi'];

/**
 * Counters of a FakeZkServer: requests by kind and watch notifications, as a real server's
 * `mntr` would report them. Benchmarks read {@link snapshot} before and after a window.
 */
export class FakeZkStats {
  private readonly ops = new Map<FakeZkOpKind, number>();
  private notified = 0;

  /** Counts one request of `kind`. */
  op(kind: FakeZkOpKind): void {
    this.ops.set(kind, (this.ops.get(kind) ?? 0) + 1);
  }

  /** Counts one notification delivered to a session. */
  notification(): void {
    this.notified++;
  }

  snapshot(): FakeZkStatsSnapshot {
    const ops = Object.fromEntries(KINDS.map((k) => [k, this.ops.get(k) ?? 0])) as Record<FakeZkOpKind, number>;
    return { ops, totalOps: KINDS.reduce((s, k) => s + ops[k], 0), notifications: this.notified };
  }

  /** `after − before`, kind by kind. */
  static diff(before: FakeZkStatsSnapshot, after: FakeZkStatsSnapshot): FakeZkStatsSnapshot {
    const ops = Object.fromEntries(KINDS.map((k) => [k, after.ops[k] - before.ops[k]])) as Record<FakeZkOpKind, number>;
    return { ops, totalOps: after.totalOps - before.totalOps, notifications: after.notifications - before.notifications };
  }
}
