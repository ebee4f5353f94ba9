/**
 * A fake netd for `pvc network add|remove --wait`: follows `/networks` and, for each node it plays,
 * writes that node's `networks_up` (our key: the VNIs whose `vmbr<vni>` is up) through the key's
 * codec after a per-node delay, as netd's follower does at the end of a pass
 * (apps/netd/src/clientnet/networks-up.ts; tested against devices in its own specs and the cluster
 * test). Knobs: which nodes never act, how long each takes.
 */
import { realClock } from '@pvc/runtime';
import { nodeKeys, pair, paths, type Unsubscribe, type ZkClient } from '@pvc/zk';

/** How the fake behaves. */
export interface FakeNetdKnobs {
  /** Nodes that never write (a node whose netd is stuck). */
  stall?: readonly string[];
  /** Delay before node i writes: `stepMs × (i + 1)` (default 100). */
  stepMs?: number;
}

/** Plays netd's `networks_up` writer for `nodes`. */
export class FakeNetd {
  private unsub: Unsubscribe | undefined;
  /** Wall-clock time (ms) of each node's last write, and the list written. */
  readonly writes = new Map<string, { at: number; vnis: number[] }>();

  constructor(private readonly zk: ZkClient, private readonly nodes: readonly string[], private readonly knobs: FakeNetdKnobs = {}) {}

  start(): this {
    this.unsub = this.zk.watchChildren(paths.networks, (children) => {
      const vnis = (children ?? []).filter((c) => /^\d+$/.test(c)).map(Number);
      this.nodes.forEach((node, i) => {
        if (this.knobs.stall?.includes(node)) return;
        void realClock.sleep((this.knobs.stepMs ?? 100) * (i + 1)).then(async () => {
          await this.zk.write([pair(nodeKeys(node).networksUp, vnis)]);
          this.writes.set(node, { at: Date.now(), vnis });
        }).catch(() => undefined);
      });
    });
    return this;
  }

  stop(): void {
    this.unsub?.();
  }
}
