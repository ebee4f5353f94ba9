import type { Clock, Logger } from '@pvc/runtime';
import { paths, type Unsubscribe, type ZkClient } from '@pvc/zk';
import { parseDaemonState, parseDomainState } from '../model.js';

/** What this observer knows of one node's heartbeat. */
export interface Sighting {
  /** The keepalive znode's data version when last seen. */
  version: number;
  /** Our clock when we saw that version appear (or started watching). */
  seenAtMs: number;
  /** The epoch the node wrote, if it was a number. Informational only. */
  epoch: number | undefined;
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
  private readonly badValues = new Set<string>();
  private readonly states = new Map<string, { daemon: string; domain: string }>();

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

  /** Every known node with its watched daemon and domain state (raw text), sorted by name. */
  nodes(): { name: string; daemonState: string; domainState: string }[] {
    return [...this.states.entries()]
      .map(([name, st]) => ({ name, daemonState: st.daemon, domainState: st.domain }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** Records a fresh read of the keepalive (a re-check under the fence lock). */
  observe(node: string, version: number, data: string): void {
    const prev = this.seen.get(node);
    if (prev && prev.version === version) return;
    this.seen.set(node, { version, seenAtMs: this.deps.clock.now(), epoch: this.parseEpoch(node, data) });
  }

  private nodesChanged(names: readonly string[]): void {
    const want = new Set(names);
    for (const [name, unwatch] of this.watches) {
      if (want.has(name)) continue;
      unwatch();
      this.watches.delete(name);
      this.seen.delete(name);
      this.states.delete(name);
    }
    for (const name of want) {
      if (this.watches.has(name)) continue;
      const k = paths.node(name);
      const state = { daemon: '', domain: '' };
      this.states.set(name, state);
      const offs = [
        this.deps.zk.watchData(k.keepalive, (v) => {
          if (v === undefined) this.seen.delete(name);
          else this.observe(name, v.stat.version, v.data);
        }),
        this.deps.zk.watchData(k.daemonState, (v) => void (state.daemon = this.checked(k.daemonState, v?.data, parseDaemonState))),
        this.deps.zk.watchData(k.domainState, (v) => void (state.domain = this.checked(k.domainState, v?.data, parseDomainState))),
      ];
      this.watches.set(name, () => offs.forEach((off) => off()));
    }
  }

  /** Keeps the raw value; an unknown one is logged once with its key (and never matches a rule). */
  private checked(key: string, raw: string | undefined, parse: (r: string) => unknown): string {
    const value = raw ?? '';
    if (value !== '' && parse(value) === undefined) {
      if (!this.badValues.has(key)) {
        this.badValues.add(key);
        this.deps.logger.warn({ key, value: value.slice(0, 40) }, 'unknown state value in ZK; the node is not acted on until it is valid');
      }
    } else this.badValues.delete(key);
    return value;
  }

  private parseEpoch(node: string, data: string): number | undefined {
    if (/^\d+$/.test(data)) {
      this.badValues.delete(node);
      return Number(data);
    }
    if (!this.badValues.has(node)) {
      this.badValues.add(node);
      this.deps.logger.warn({ key: paths.node(node).keepalive, value: data.slice(0, 40) }, 'keepalive value is not an epoch; counting its changes only');
    }
    return undefined;
  }
}
