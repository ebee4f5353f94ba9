/**
 * After the failover: the victim's return (network restored, its supervisor back, daemon state
 * `run`) without any guest started twice, and the printed timeline.
 */
import { realClock } from '@pvc/runtime';
import { paths } from '@pvc/zk';
import { waitFor } from './harness/index.js';
import { phases, type FailoverCluster, type FailoverTimeline, type Guest } from './failover-scenario.js';

/** What the victim's return looked like. */
export interface ReturnResult {
  /** ms from the network restore to the victim's daemon state `run`. */
  backToRunMs: number;
  /** Guests whose domain id changed or that ran anywhere else than their new host afterwards. */
  startedAgain: string[];
}

async function domIds(fc: FailoverCluster, guests: readonly Guest[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const g of guests) {
    const where = fc.watch.where(g.uuid);
    const host = fc.cluster.hosts.find((h) => h.name === where[0]);
    const id = host ? (await host.virsh(['domid', g.uuid])).stdout.trim() : '';
    out.set(g.name, `${where.join('+')}#${id}`);
  }
  return out;
}

/**
 * The fence power-cycled the victim; its network is still cut, so its supervisor cannot reach ZK.
 * Restores the network, waits for daemon state `run`, then watches `settleMs` more: every guest
 * must still run once, on the same host, as the same domain.
 */
export async function victimReturns(fc: FailoverCluster, guests: readonly Guest[], settleMs = 5_000): Promise<ReturnResult> {
  const { victim, zk } = fc;
  await waitFor(`${victim.name} powered on again by the fence`, 30_000, async () => ((await victim.isPoweredOn()) ? true : undefined), 200);
  const before = await domIds(fc, guests);
  const t0 = realClock.now();
  await victim.restoreNetwork();
  await waitFor(`${victim.name} daemonstate run again`, 180_000, async () => ((await zk.read(paths.node(victim.name).daemonState)) === 'run' ? true : undefined), 200);
  const backToRunMs = realClock.now() - t0;
  await realClock.sleep(settleMs);
  const after = await domIds(fc, guests);
  const startedAgain = guests.filter((g) => before.get(g.name) !== after.get(g.name)).map((g) => `${g.name}: ${before.get(g.name)} → ${after.get(g.name)}`);
  return { backToRunMs, startedAgain };
}

const s = (ms: number | undefined): string => (ms === undefined ? '—' : `${(ms / 1000).toFixed(2)} s`);
const at = (t: FailoverTimeline, ms: number | undefined): string => (ms === undefined ? 'never' : `+${((ms - t.failureAt) / 1000).toFixed(2)} s`);

/** The timeline as printable lines. */
export function formatTimeline(t: FailoverTimeline): string[] {
  const p = phases(t);
  const lines = [
    `failure (cluster link down)      ${at(t, t.failureAt)} (the cut returned ${t.cutMs} ms after it was asked)`,
    `powered off via IPMI             ${at(t, t.poweredOffAt)}`,
    `declared dead (log / ZK watch)   ${at(t, t.deadAt)} / ${at(t, t.deadWatchAt)}`,
    `fenced (log / ZK watch)          ${at(t, t.fencedAt)} / ${at(t, t.fencedWatchAt)}`,
    ...[...t.moved].map(([vm, m]) => `${vm} node → ${m.target} (ZK watch)`.padEnd(33) + ` ${at(t, m.at)}`),
    ...[...t.runningElsewhere].map(([vm, r]) => `${vm} running on ${r.host} (virsh)`.padEnd(33) + ` ${at(t, r.at)}`),
    ...[...t.firstTick].map(([vm, ms]) => `${vm} first console tick`.padEnd(33) + ` ${at(t, ms)}`),
    `flushed (ZK watch)               ${at(t, t.flushedAt)}`,
    `keepaliled log:`,
    ...t.events.map((e) => `  ${at(t, e.at)} ${e.host} ${e.msg} ${e.detail}`),
    `window ${s(t.windowMs)}: detect ${s(p.detect)}, fence ${s(p.fence)}, restart ${s(p.restart)} (moves written after ${s(p.move)}), ` +
      `total ${s(p.total)} (window + ${s(p.total === undefined ? undefined : p.total - t.windowMs)}), first tick at ${s(p.firstTick)}`,
    `quorum while fencing: ${t.quorumAtFence ? 'yes' : 'NO'} (${t.quorumDetail})`,
  ];
  return lines;
}
