/**
 * What the RBD benchmarks read besides the failover timeline: when each recovered guest printed
 * `marker boot <text>` (it read its disk on the new host), sampled from its console log while the
 * failover runs, and cephd's lock-flush lines (`RBD lock flush`, `removed RBD lock`) from every
 * host's pvc log directory.
 */
import { realClock } from '@pvc/runtime';
import { waitFor, type Cluster, type ClusterHost } from '../tests/cluster/harness/index.js';
import { MARKED_DOWN, serviceLines, type ServiceLine } from '../tests/cluster/failover-logs.js';
import { consoleDisk, consoleSize } from '../tests/support/guest/console.js';

/** A guest as the probes need it. */
export interface Named {
  name: string;
}

/** Waits (bounded) until each guest's console has `marker wrote <marker(g)>`. Returns ms waited. */
export async function waitMarkersWritten<G extends Named>(cluster: Cluster, guests: readonly G[], marker: (g: G) => string, timeoutMs = 120_000): Promise<number> {
  const t0 = realClock.now();
  await waitFor(`every guest's marker written`, timeoutMs, async () => {
    const missing = guests.filter((g) => !consoleDisk(cluster.guest.consoleLog(g.name), g.name).wrote.includes(marker(g)));
    if (missing.length === 0) return true;
    throw new Error(`no 'marker wrote' yet from ${missing.map((g) => g.name).join(' ')}`);
  }, 250);
  return realClock.now() - t0;
}

/** First sighting of a `marker boot` line after the console offsets taken at construction, every 100 ms. */
export class MarkerBootSampler {
  readonly seen = new Map<string, { at: number; text: string | null }>();
  readonly errors = new Map<string, string[]>();
  private readonly offsets: Map<string, number>;
  private running = true;
  private readonly loop: Promise<void>;

  constructor(private readonly cluster: Cluster, private readonly guests: readonly Named[]) {
    this.offsets = new Map(guests.map((g) => [g.name, consoleSize(cluster.guest.consoleLog(g.name))]));
    this.loop = this.run();
  }

  private poll(): void {
    for (const g of this.guests) {
      if (this.seen.has(g.name)) continue;
      const d = consoleDisk(this.cluster.guest.consoleLog(g.name), g.name, this.offsets.get(g.name) ?? 0);
      if (d.errors.length > 0) this.errors.set(g.name, d.errors);
      if (d.boots.length > 0) this.seen.set(g.name, { at: realClock.now(), text: d.boots[0]! });
    }
  }

  private async run(): Promise<void> {
    while (this.running) {
      this.poll();
      await realClock.sleep(100);
    }
  }

  /** Waits up to `graceMs` more for the missing guests, then stops. */
  async stop(graceMs = 10_000): Promise<void> {
    const until = realClock.now() + graceMs;
    while (this.seen.size < this.guests.length && realClock.now() < until) await realClock.sleep(100);
    this.running = false;
    await this.loop;
  }
}


/** cephd's lock-flush lines after a failure: the fence recovery's `force` flush and the targets' `own` flushes before start. */
export interface LockFlushes {
  /** When cephd finished the recovery's force flush (last one if several), and on which host. */
  forceAt?: number;
  forceHost?: string;
  /** Locks the force flush removed (`removed RBD lock` mode force). */
  forceRemoved: number;
  /** The `own` flushes (vmd before each start), finish times. */
  ownAt: number[];
  /** When the force flush's cephd had marked the fenced node's OSDs down (`ceph osd down`). */
  markedDownAt?: number;
  failed: string[];
  lines: ServiceLine[];
}

export function lockFlushes(hosts: readonly ClusterHost[], since: number): LockFlushes {
  const lines = serviceLines(hosts, 'cephd', [
    'RBD lock flush', 'removed RBD lock', 'RBD lock flush failed', 'RBD lock held by another address: refused, left in place',
    MARKED_DOWN, 'could not mark the fenced node\'s OSDs down; Ceph will after its own grace',
  ], since);
  const force = lines.filter((l) => l.msg === 'RBD lock flush' && l.o.mode === 'force');
  return {
    forceAt: force.at(-1)?.at,
    forceHost: force.at(-1)?.host,
    forceRemoved: lines.filter((l) => l.msg === 'removed RBD lock' && l.o.mode === 'force').length,
    ownAt: lines.filter((l) => l.msg === 'RBD lock flush' && l.o.mode === 'own').map((l) => l.at),
    markedDownAt: lines.find((l) => l.msg === MARKED_DOWN)?.at,
    failed: lines.filter((l) => l.msg !== 'RBD lock flush' && l.msg !== 'removed RBD lock' && l.msg !== MARKED_DOWN).map((l) => `${l.host} ${l.msg} ${String(l.o.image ?? '')} ${String(l.o.reason ?? '')}`),
    lines,
  };
}

/** A line for the printed log. */
export function describeLine(l: ServiceLine, t0: number): string {
  const keys = ['mode', 'image', 'lockId', 'locker', 'address', 'flushed', 'failed', 'held', 'reason', 'node', 'osds', 'ms', 'err'];
  const detail = keys.filter((k) => l.o[k] !== undefined).map((k) => `${k}=${typeof l.o[k] === 'string' ? l.o[k] : JSON.stringify(l.o[k])}`).join(' ');
  return `+${((l.at - t0) / 1000).toFixed(2)} s ${l.host} cephd ${l.msg} ${detail}`;
}

/** Ceph's cluster log (`ceph log last`) entries since `since` that say an OSD went down or failed: [epoch ms, message]. */
/** The Ceph monitor quorum's leader (`ceph quorum_status`), or why it is not known. */
export async function cephMonLeader(cluster: Cluster): Promise<string> {
  if (!cluster.ceph) return '(no Ceph)';
  try {
    const q = await cluster.ceph.cephJson<{ quorum_leader_name?: string }>(['quorum_status'], { timeoutMs: 15_000 });
    return String(q.quorum_leader_name ?? '?');
  } catch (err) {
    return `? (${err instanceof Error ? err.message.split('\n')[0] : String(err)})`;
  }
}

export async function osdDownLog(cluster: Cluster, since: number): Promise<{ at: number; message: string }[]> {
  const ceph = cluster.ceph;
  if (!ceph) return [];
  try {
    const entries = await ceph.cephJson<{ stamp?: string; message?: string }[]>(['log', 'last', '300', 'debug', 'cluster'], { timeoutMs: 15_000 });
    return entries
      .map((e) => ({ at: Date.parse(String(e.stamp ?? '')), message: String(e.message ?? '') }))
      .filter((e) => e.at >= since && /osd\.\d+ failed|osds? down|marked.*down/i.test(e.message));
  } catch (err) {
    return [{ at: NaN, message: `ceph log last failed: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}` }];
  }
}

export const median = (xs: readonly number[]): number | undefined => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? undefined : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
