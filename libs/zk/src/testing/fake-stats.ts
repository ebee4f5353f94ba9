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
  /** Requests by kind and path shape, while {@link trackShapes} is on (benchmarks). */
  private readonly shapes = new Map<string, number>();
  /** Counts requests by `<kind> <path shape>` too ({@link shapeCounts}); off by default (it costs a regex per request). */
  trackShapes = false;

  /** Counts one request of `kind` on `path` (a multi's first path). */
  op(kind: FakeZkOpKind, path?: string): void {
    this.ops.set(kind, (this.ops.get(kind) ?? 0) + 1);
    if (this.trackShapes) {
      const k = `${kind} ${path === undefined ? '?' : pathShape(path)}`;
      this.shapes.set(k, (this.shapes.get(k) ?? 0) + 1);
    }
  }

  /** The requests counted by shape since {@link trackShapes} was turned on, most first. */
  shapeCounts(): [string, number][] {
    return [...this.shapes].sort((a, b) => b[1] - a[1]);
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

/**
 * A path with its variable parts replaced: UUIDs by `<uuid>`, node names `hv<n>` by `<node>`,
 * sequential suffixes by `<seq>`. `/domains/<uuid>/node`, `/nodes/<node>/keepalive`…
 */
export function pathShape(path: string): string {
  return path
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<uuid>')
    .replace(/\/hv\d+(?=\/|$)/g, '/<node>')
    .replace(/\d{10}$/, '<seq>');
}
