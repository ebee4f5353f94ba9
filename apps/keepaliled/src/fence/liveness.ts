import type { Clock, Logger } from '@pvc/runtime';
import { nodeKeys, paths, watchKey, type DaemonState, type LockHolder, type NodeDomainState, type Unsubscribe, type ZkClient, type ZkOp } from '@pvc/zk';
import { keptWindowStart, vouchedMs } from './blind-spell.js';

/** What this observer knows of one node's heartbeat. */
export interface Sighting {
  /** The keepalive znode's data version when last seen. */
  version: number;
  /** Our clock when we saw that version appear (or started watching); never reset. */
  appearedAtMs: number;
  /**
   * Whether a watch notification showed it as it was written, while we were connected (not a
   * watch's first read, the first sighting after our reconnection, or a fencer's re-read).
   */
  seenLive: boolean;
  /**
   * Where the node's silence window starts: `appearedAtMs`, or later after a blind spell of ours
   * (see {@link LivenessTracker}).
   */
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
 * for the same reason (we were blind). Unless a peer's keepalive proves Zookeeper took writes
 * while we were blind (`blind-spell.ts`): then a node whose version did not move keeps the vouched
 * part of its silence, checked by a fresh read of its version first.
 */
export class LivenessTracker {
  private readonly seen = new Map<string, Sighting>();
  private readonly watches = new Map<string, Unsubscribe>();
  private readonly unsubs: Unsubscribe[] = [];
  private readonly states = new Map<string, { daemon: DaemonState | undefined; domain: NodeDomainState | undefined }>();
  private readonly listeners = new Set<() => void>();
  /** Nodes whose first keepalive sighting since our last reconnection is still to come. */
  private firstAfterReconnect = new Set<string>();
  /** Counts reconnections, so a restore decided before one is not applied after it. */
  private reconnections = 0;
  /** Our clock at the last reconnection (0 before any). */
  private reconnectedAtMs = 0;

  /**
   * `self` (this node: its own silence is our blindness, never evidence nor kept) and `intervalMs`
   * (the keepalive interval, which turns a peer's beats into time) serve the blind-spell rule.
   */
  constructor(private readonly deps: { zk: ZkClient; clock: Clock; logger: Logger; self: string; intervalMs: number }) {}

  start(): void {
    const { zk, clock } = this.deps;
    this.unsubs.push(zk.watchChildren(paths.nodes, (names) => this.nodesChanged(names ?? [])));
    this.unsubs.push(
      zk.on('connected', () => {
        const now = clock.now();
        for (const s of this.seen.values()) s.seenAtMs = now;
        this.reconnections += 1;
        this.reconnectedAtMs = now;
        this.firstAfterReconnect = new Set(this.seen.keys());
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
   * Like {@link silentForMs}, without what peers vouched for after a blind spell of ours: counted
   * from our last reconnection at the latest, as before that rule. For the failed-fence reset
   * wait, whose safety argument (docs/keepaliled.md, "Safety with a failed fence") needs a true
   * global outage, however short, to restart it.
   */
  silentUnvouchedForMs(node: string): number | undefined {
    const s = this.seen.get(node);
    return s === undefined ? undefined : this.deps.clock.now() - Math.max(s.appearedAtMs, this.reconnectedAtMs);
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
   * reader, read as 0) is still a sign of life. `seenLive`: see {@link Sighting}.
   */
  observe(node: string, version: number, epoch: number, seenLive = false): void {
    const prev = this.seen.get(node);
    if (prev && prev.version === version) return;
    const now = this.deps.clock.now();
    this.seen.set(node, { version, appearedAtMs: now, seenAtMs: now, seenLive, epoch: epoch > 0 ? epoch : undefined });
  }

  /** A keepalive sighting from the watch: the first one of a peer since our reconnection may vouch for others' silence. */
  private keepaliveSeen(node: string, version: number, epoch: number): void {
    const before = this.seen.get(node);
    const first = this.firstAfterReconnect.delete(node);
    this.observe(node, version, epoch, !first && before !== undefined);
    if (!first || before === undefined || node === this.deps.self) return;
    const atMs = this.deps.clock.now();
    const { version: versionBefore, appearedAtMs, seenLive } = before;
    const vouched = vouchedMs({ versionBefore, appearedAtMs, seenLive, versionAfter: version, atMs }, this.deps.intervalMs);
    if (vouched > 0) void this.keepSilences(node, version - before.version, vouched, atMs);
  }

  /**
   * Restores the vouched part of the silence of every node (not us, not the voucher) whose window
   * it lengthens, once a fresh read shows its version still the one we saw: its own first
   * sighting may not have arrived yet (a reconnection that keeps the session reports only changed
   * keys). Skipped if we reconnected again meanwhile, or for a node whose read failed or moved.
   */
  private async keepSilences(voucher: string, beats: number, vouched: number, atMs: number): Promise<void> {
    const { zk, logger, self, intervalMs } = this.deps;
    const start = (s: Sighting): number => keptWindowStart(s, vouched, atMs, intervalMs);
    const gen = this.reconnections;
    const wanted = [...this.seen].filter(([n, s]) => n !== self && n !== voucher && start(s) < s.seenAtMs);
    const reads = await Promise.all(wanted.map(([n]) => zk.exists(nodeKeys(n).keepalive.path).catch(() => undefined)));
    wanted.forEach(([node, then], i) => {
      const s = this.seen.get(node);
      if (gen !== this.reconnections || s !== then || reads[i]?.version !== s.version) return;
      s.seenAtMs = start(s);
      logger.info({ node, voucher, beats, vouchedMs: vouched, silentMs: this.deps.clock.now() - s.seenAtMs }, 'silence kept across our blind spell: a peer wrote keepalives meanwhile');
    });
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
          else this.keepaliveSeen(name, snap.stat.version, epoch ?? 0);
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
