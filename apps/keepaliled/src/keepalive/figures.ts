import type { Clock, Logger } from '@pvc/runtime';
import { describeError, withinDeadline } from '@pvc/runtime';
import type { NodeResources } from '@pvc/rpc';
import type { HostStats, MemoryFigures, Peers } from '../ports.js';

/** Everything one keepalive reports about the node. */
export interface NodeFigures {
  memory: MemoryFigures;
  load1: number;
  resources: NodeResources;
  networkStatsJson: string;
  networkCount: number;
  /** Sources whose figures are from an earlier keepalive (slow or down), e.g. `['vmd']`. */
  stale: string[];
  /**
   * Peers that are down ({@link DOWN_AFTER_MISSES}): the keepalive leaves their keys out, so their
   * last values stay in ZK untouched instead of being re-asserted. Always a subset of `stale`.
   */
  down: PeerName[];
}

/** The local services keepaliled gathers figures from. */
export type PeerName = 'vmd' | 'netd';

/** Sources of figures: the peers and this host's /proc. */
type SourceName = PeerName | 'host';

/**
 * A peer is down once this many consecutive keepalives got no figures from it (failed or past the
 * deadline). One slow answer only makes that keepalive's figures stale; the first answer ends it.
 */
export const DOWN_AFTER_MISSES = 2;

/** What the gatherer knows of one peer (for the `pvcs` health plugin). */
export interface PeerStatus {
  name: PeerName;
  down: boolean;
  /** Consecutive keepalives without its figures. */
  misses: number;
  /** Clock ms since its last answer (since the first gathering if it never answered); 0 when it answered last time. */
  silentForMs: number;
}

interface PeerTrack {
  misses: number;
  /** Clock ms of the last answer, or of the first gathering until there is one. */
  lastAnswerMs: number | undefined;
}

/**
 * Gathers the node's figures, each source bounded by `deadlineMs`. A source that fails or is late
 * leaves its previous value in place and is listed in `stale`: a slow peer makes figures stale,
 * never the keepalive late. A peer without figures for {@link DOWN_AFTER_MISSES} gatherings in a
 * row is listed in `down` (logged once, warn) until its first answer (logged once, info).
 */
export class FigureGatherer {
  private last: Omit<NodeFigures, 'stale' | 'down'> = {
    memory: { totalMiB: 0, usedMiB: 0, freeMiB: 0 },
    load1: 0,
    resources: { runningDomains: [], memAllocMib: 0, memProvMib: 0, vcpuAlloc: 0 },
    networkStatsJson: '{}',
    networkCount: 0,
  };
  private readonly staleNow = new Set<SourceName>();
  private readonly tracks: Record<PeerName, PeerTrack> = {
    vmd: { misses: 0, lastAnswerMs: undefined },
    netd: { misses: 0, lastAnswerMs: undefined },
  };

  constructor(private readonly deps: { peers: Peers; host: HostStats; logger: Logger; clock: Clock }) {}

  /** Gathers within `deadlineMs` (each source in parallel). Never rejects. */
  async gather(deadlineMs: number, signal?: AbortSignal): Promise<NodeFigures> {
    const opts = { deadlineMs, signal };
    const startedMs = this.deps.clock.now();
    const { peers, host } = this.deps;
    const [mem, load, res, net] = await Promise.allSettled([
      withinDeadline(this.deps.clock, host.memory(), deadlineMs),
      withinDeadline(this.deps.clock, host.load1(), deadlineMs),
      // Peers are given the deadline, and held to it: one that ignores it must not hold the keepalive.
      withinDeadline(this.deps.clock, peers.resources(opts), deadlineMs),
      withinDeadline(this.deps.clock, peers.networkStats(opts), deadlineMs),
    ]);
    if (mem.status === 'fulfilled') this.last.memory = mem.value;
    if (load.status === 'fulfilled') this.last.load1 = load.value;
    if (res.status === 'fulfilled') this.last.resources = res.value;
    if (net.status === 'fulfilled') {
      this.last.networkStatsJson = net.value.statsJson || '{}';
      this.last.networkCount = net.value.networkCount;
    }
    this.noteHost(mem.status === 'fulfilled' && load.status === 'fulfilled' ? undefined : firstReason(mem, load));
    this.notePeer('vmd', res.status === 'fulfilled' ? undefined : res.reason, startedMs);
    this.notePeer('netd', net.status === 'fulfilled' ? undefined : net.reason, startedMs);
    const down = (Object.keys(this.tracks) as PeerName[]).filter((p) => this.isDown(p)).sort();
    return { ...this.last, stale: [...this.staleNow].sort(), down };
  }

  /** Each peer's state as of the last gathering, `netd` then `vmd`. */
  peers(): PeerStatus[] {
    const now = this.deps.clock.now();
    return (Object.keys(this.tracks) as PeerName[]).sort().map((name) => {
      const t = this.tracks[name];
      return {
        name,
        down: this.isDown(name),
        misses: t.misses,
        silentForMs: t.misses === 0 || t.lastAnswerMs === undefined ? 0 : Math.max(0, now - t.lastAnswerMs),
      };
    });
  }

  private isDown(peer: PeerName): boolean {
    return this.tracks[peer].misses >= DOWN_AFTER_MISSES;
  }

  private noteHost(failure: unknown): void {
    if (failure === undefined) {
      if (this.staleNow.delete('host')) this.deps.logger.info({ peer: 'host' }, 'figures from host are fresh again');
      return;
    }
    if (this.staleNow.has('host')) return;
    this.staleNow.add('host');
    this.deps.logger.warn({ peer: 'host', err: describeError(failure) }, 'figures from host unavailable; keepalives carry its last known figures');
  }

  /** Counts a peer's answer or miss; logs going down and coming back once each (a single miss at debug). */
  private notePeer(peer: PeerName, failure: unknown, atMs: number): void {
    const t = this.tracks[peer];
    const { logger } = this.deps;
    if (failure === undefined) {
      if (this.isDown(peer)) logger.info({ peer, misses: t.misses }, `${peer} answers again; keepalives carry its figures again`);
      else if (t.misses > 0) logger.debug({ peer }, `figures from ${peer} are fresh again`);
      t.misses = 0;
      t.lastAnswerMs = atMs;
      this.staleNow.delete(peer);
      return;
    }
    t.lastAnswerMs ??= atMs;
    t.misses += 1;
    this.staleNow.add(peer);
    const err = describeError(failure);
    if (t.misses === DOWN_AFTER_MISSES) {
      logger.warn({ peer, misses: t.misses, err }, `${peer} is down: no figures for ${t.misses} keepalives; keepalives leave its keys out`);
    } else if (t.misses === 1) {
      logger.debug({ peer, err }, `no figures from ${peer}; this keepalive carries its last known figures`);
    }
  }
}

function firstReason(...results: PromiseSettledResult<unknown>[]): unknown {
  for (const r of results) if (r.status === 'rejected') return r.reason;
  return undefined;
}

