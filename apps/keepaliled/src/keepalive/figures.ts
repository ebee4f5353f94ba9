import type { Clock, Logger } from '@pvc/runtime';
import { describeError } from '@pvc/runtime';
import type { NodeResources } from '@pvc/rpc';
import type { HostStats, MemoryFigures, Peers } from '../ports.js';

/** Everything one keepalive reports about the node. */
export interface NodeFigures {
  memory: MemoryFigures;
  load1: number;
  resources: NodeResources;
  networkStatsJson: string;
  networkCount: number;
  /** Peers whose figures are from an earlier keepalive (slow or down), e.g. `['vmd']`. */
  stale: string[];
}

type PeerName = 'vmd' | 'netd' | 'cephd' | 'host';

/**
 * Gathers the node's figures, each source bounded by `deadlineMs`. A source that fails or is late
 * leaves its previous value in place and is listed in `stale`: a slow peer makes figures stale,
 * never the keepalive late. State changes (a peer going stale or coming back) are logged once.
 */
export class FigureGatherer {
  private last: Omit<NodeFigures, 'stale'> = {
    memory: { totalMiB: 0, usedMiB: 0, freeMiB: 0 },
    load1: 0,
    resources: { runningDomains: [], memAllocMib: 0, memProvMib: 0, vcpuAlloc: 0 },
    networkStatsJson: '{}',
    networkCount: 0,
  };
  private readonly staleNow = new Set<PeerName>();

  constructor(private readonly deps: { peers: Peers; host: HostStats; logger: Logger; clock: Clock }) {}

  /** Gathers within `deadlineMs` (each source in parallel). Never rejects. */
  async gather(deadlineMs: number, signal?: AbortSignal): Promise<NodeFigures> {
    const opts = { deadlineMs, signal };
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
    this.note('host', mem.status === 'fulfilled' && load.status === 'fulfilled' ? undefined : firstReason(mem, load));
    this.note('vmd', res.status === 'fulfilled' ? undefined : res.reason);
    this.note('netd', net.status === 'fulfilled' ? undefined : net.reason);
    return { ...this.last, stale: [...this.staleNow].sort() };
  }

  private note(peer: PeerName, failure: unknown): void {
    if (failure === undefined) {
      if (this.staleNow.delete(peer)) this.deps.logger.info({ peer }, `figures from ${peer} are fresh again`);
      return;
    }
    if (this.staleNow.has(peer)) return;
    this.staleNow.add(peer);
    this.deps.logger.warn({ peer, err: describeError(failure) }, `figures from ${peer} unavailable; keepalives carry its last known figures`);
  }
}

function firstReason(...results: PromiseSettledResult<unknown>[]): unknown {
  for (const r of results) if (r.status === 'rejected') return r.reason;
  return undefined;
}

/** Bounds any source: a wedged /proc read or a peer that ignores its deadline must not hold a keepalive. */
async function withinDeadline<T>(clock: Clock, p: Promise<T>, ms: number): Promise<T> {
  const timer = new AbortController();
  const late = clock.sleep(ms, timer.signal).then(
    () => Promise.reject(new Error(`no answer within ${ms} ms`)),
    () => new Promise<never>(() => undefined),
  );
  try {
    return await Promise.race([p, late]);
  } finally {
    timer.abort();
  }
}
