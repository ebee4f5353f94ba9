import type { Clock, Logger } from '@pvc/runtime';
import { nodeKeys, paths, watchKey, type DaemonState, type LockHolder, type NodeDomainState, type Unsubscribe, type ZkClient, type ZkOp } from '@pvc/zk';

/** What this observer knows of one node's heartbeat. */
export interface Sighting {
  /** The keepalive znode's data version when last seen. */
  version: number;
  /** Our clock when we saw that version appear (or started watching). */
  seenAtMs: number;
  /** The epoch the node wrote, if it was one. Informational only. */
  epoch: number | undefined;
}

/** A node's watched states; `undefined` = absent, empty or unknown (an unknown value is logged by the key reader). */
export interface WatchedNode {
  name: string;
  daemonState: DaemonState | undefined;
  domainState: NodeDomainState | undefined;
}

/**
 * Watches every node's keepalive key and remembers, by this process's clock, when each last
 * changed. Deadness is judged from how long we have seen no change — never from the timestamp a
 * node wrote — so clock skew between nodes cannot fence a live node (the original compared the
 * node's own epoch with the fencer's clock). A fresh observer knows nothing of the past, so every
 * node starts with a full window; after our own ZK connection comes back every sighting is reset
 * for the same reason (we were blind).
 */
export class LivenessTracker {
  private readonly seen = new Map<string, Sighting>();
  private readonly watches = new Map<string, Unsubscribe>();
  private readonly unsubs: Unsubscribe[] = [];
  private readonly states = new Map<string, { daemon: DaemonState | undefined; domain: NodeDomainState | undefined }>();
  private readonly listeners = new Set<() => void>();

  constructor(private readonly deps: { zk: ZkClient; clock: Clock; logger: Logger }) {}

  start(): void {
    const { zk, clock } = this.deps;
    this.unsubs.push(zk.watchChildren(paths.nodes, (names) => this.nodesChanged(names ?? [])));
    this.unsubs.push(
      zk.on('connected', () => {
        const now = clock.now();
        for (const s of this.seen.values()) s.seenAtMs = now;
      }),
    );
  }

  stop(): void {
    for (const u of this.unsubs.splice(0)) u();
    for (const u of this.watches.values()) u();
    this.watches.clear();
  }

  /** The latest sighting of `node`, if it has a keepalive key. */
  sighting(node: string): Sighting | undefined {
    return this.seen.get(node);
  }

  /** Milliseconds since `node`'s keepalive last changed (undefined if never seen). */
  silentForMs(node: string): number | undefined {
    const s = this.seen.get(node);
    return s === undefined ? undefined : this.deps.clock.now() - s.seenAtMs;
  }

  /**
   * A lock-break guard for a lock contender held by a node we have seen silent for `windowMs` (a
   * fencer that died holding the fence lock, whose session has not expired yet): a `check` of its
   * keepalive at the version we last saw, so the break fails if it wrote one meanwhile. Undefined
   * (wait as usual) for ourselves, a contender that is not a known node (a CLI, an original
   * daemon's uuid), or a node not silent long enough.
   */
  deadHolderGuard(holder: LockHolder, self: string, windowMs: number): ZkOp[] | undefined {
    const node = holder.identifier;
    const s = this.seen.get(node);
    if (node === self || s === undefined || this.deps.clock.now() - s.seenAtMs < windowMs) {
      this.deps.logger.debug({ holder: node, lock: holder.path, silentMs: s === undefined ? undefined : this.deps.clock.now() - s.seenAtMs }, 'lock holder not known dead; waiting for it');
      return undefined;
    }
    this.deps.logger.warn({ holder: node, lock: holder.path, silentMs: this.deps.clock.now() - s.seenAtMs }, 'breaking a lock held by a node silent for the detection window (its session has not expired yet)');
    return [{ type: 'check', path: nodeKeys(node).keepalive.path, version: s.version }];
  }

  /**
   * Calls `listener` whenever a node's daemon or domain state (as watched) changes, or a node
   * appears or goes. Level-based users re-read {@link nodes} then; returns the unsubscribe.
   */
  onStateChange(listener: () => void): Unsubscribe {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** Every known node with its watched daemon and domain state, sorted by name. */
  nodes(): WatchedNode[] {
    return [...this.states.entries()]
      .map(([name, st]) => ({ name, daemonState: st.daemon, domainState: st.domain }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /**
   * Records a sighting of the keepalive key at `version` (from the watch, or a re-check under the
   * fence lock). Only the version counts: a keepalive that is not an epoch (logged by the key
   * reader, read as 0) is still a sign of life.
   */
  observe(node: string, version: number, epoch: number): void {
    const prev = this.seen.get(node);
    if (prev && prev.version === version) return;
    this.seen.set(node, { version, seenAtMs: this.deps.clock.now(), epoch: epoch > 0 ? epoch : undefined });
  }

  private changed(): void {
    for (const l of [...this.listeners]) l();
  }

  private nodesChanged(names: readonly string[]): void {
    const want = new Set(names);
    for (const [name, unwatch] of this.watches) {
      if (want.has(name)) continue;
      unwatch();
      this.watches.delete(name);
      this.seen.delete(name);
      this.states.delete(name);
      this.changed();
    }
    for (const name of want) {
      if (this.watches.has(name)) continue;
      const k = nodeKeys(name);
      const { zk, logger } = this.deps;
      const state: { daemon: DaemonState | undefined; domain: NodeDomainState | undefined } = { daemon: undefined, domain: undefined };
      this.states.set(name, state);
      const offs = [
        watchKey(zk, k.keepalive, (epoch, snap) => {
          if (snap === undefined) this.seen.delete(name);
          else this.observe(name, snap.stat.version, epoch ?? 0);
        }, logger),
        watchKey(zk, k.daemonState, (v) => {
          if (state.daemon === v) return;
          state.daemon = v;
          this.changed();
        }, logger),
        watchKey(zk, k.domainState, (v) => {
          if (state.domain === v) return;
          state.domain = v;
          this.changed();
        }, logger),
      ];
      this.watches.set(name, () => offs.forEach((off) => off()));
    }
  }
}
