/**
 * The number of client networks in the cluster (`/networks` children), kept current by a
 * self-re-arming children watch. While Zookeeper is unreachable the watch does not fire, so the
 * last known count stays in force.
 */
import type { Logger } from '@pvc/runtime';
import { paths, type Unsubscribe, type ZkClient } from '@pvc/zk';

/** Watches `/networks` and remembers how many children it has. */
export class NetworkCounter {
  private count = 0;
  private known = false;
  private unwatch: Unsubscribe | undefined;

  constructor(
    private readonly zk: ZkClient,
    private readonly logger: Logger,
  ) {}

  /** The last known count (0 before Zookeeper was first reached, or when `/networks` is absent). */
  get value(): number {
    return this.count;
  }

  /** Whether a count has been read from Zookeeper at least once. */
  get isKnown(): boolean {
    return this.known;
  }

  /** Starts the watch; idempotent. */
  start(): void {
    if (this.unwatch) return;
    this.unwatch = this.zk.watchChildren(paths.networks, (children) => {
      const next = children?.length ?? 0;
      if (next !== this.count || !this.known) this.logger.info({ networks: next }, 'client network count');
      this.count = next;
      this.known = true;
    });
  }

  stop(): void {
    this.unwatch?.();
    this.unwatch = undefined;
  }
}
