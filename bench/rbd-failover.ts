/**
 * Failover of RBD-backed guests (issue 13 item 7), modelled on bench/failover.ts: a real 3-host
 * harness cluster running the node services with a real Ceph (3 mons + mgrs started by the
 * supervisor, an OSD per host, pool `vms` size 3 / min_size 2); 1 or 5 guests on the victim (hv3),
 * each with its own RBD image as a raw virtio disk on which it writes a marker at boot; the victim's
 * network is cut and its power switched off through its BMC. Per run: window, detect, fence,
 * restart, total, total − window (target ≤ 5 s, the RBD lock flush included), the time from
 * `fenced` to each recovered guest's `marker boot` line (it read its disk on the new host), and
 * cephd's lock flushes (the recovery's force flush, the targets' own flushes before start). The
 * same 1-guest failover with a diskless guest on the same kind of cluster (Ceph running) is the
 * baseline. Root only; a cluster per run, ~2 min each.
 *
 *   node --conditions=development --import tsx bench/rbd-failover.ts [--runs N] [--only rbd-1|rbd-5|diskless-1]
 *
 * Default runs: rbd-1 ×3, rbd-5 ×2, diskless-1 ×2 (`--runs N` sets every configuration's).
 */
import { realClock } from '@pvc/runtime';
import { missingPrerequisites } from '../tests/cluster/harness/index.js';
import { failVictim, falseDeaths, phases, placeGuests, rbdMarker, startFailoverCluster, type FailoverTimeline, type Guest, type RbdGuestOptions } from '../tests/cluster/failover-scenario.js';
import { formatTimeline } from '../tests/cluster/failover-report.js';
import { staleBuilds } from '../tests/cluster/pvc-node.js';
import { cephMonLeader, describeLine, lockFlushes, MarkerBootSampler, median, osdDownLog, waitMarkersWritten } from './rbd-probes.js';

interface Config {
  id: string;
  rbd: boolean;
  guests: number;
  runs: number;
}

interface Row {
  config: Config;
  run: number;
  windowMs: number;
  detect?: number;
  fence?: number;
  restart?: number;
  total?: number;
  /** fenced → last recovered guest's `marker boot` line. */
  markerBoot?: number;
  /** fenced → cephd's force flush logged done. */
  forceFlush?: number;
  /** fenced → cephd (force flush) marked the fenced node's OSDs down. */
  markedDown?: number;
  forceRemoved: number;
  /** failure → Ceph's cluster log first says an OSD failed / is down. */
  osdDown?: number;
  notes: string[];
}

const SETTINGS = { keepaliveInterval: 1, fenceIntervals: 3, successfulFence: 'migrate' as const };
const TARGET_MS = 5_000;
const CONFIGS: Config[] = [
  { id: 'rbd-1', rbd: true, guests: 1, runs: 3 },
  { id: 'rbd-5', rbd: true, guests: 5, runs: 2 },
  { id: 'diskless-1', rbd: false, guests: 1, runs: 2 },
];
const RBD: RbdGuestOptions = { marker: 'b' };

/** 96 MiB for one guest; 72–96 MiB for several (as bench/failover.ts). */
const memories = (n: number): number[] => (n === 1 ? [96] : Array.from({ length: n }, (_, i) => 72 + ((i * 8) % 32)));
const sec = (ms: number | undefined, d = 1): string => (ms === undefined ? '—' : (ms / 1000).toFixed(d));
const beyond = (r: Row): number | undefined => (r.total === undefined ? undefined : r.total - r.windowMs);

async function runOne(c: Config, run: number): Promise<Row> {
  console.log(`\n== ${c.guests} ${c.rbd ? 'RBD-backed' : 'diskless'} guest(s), interval ${SETTINGS.keepaliveInterval}, fence_intervals ${SETTINGS.fenceIntervals}, run ${run}`);
  const log = (l: string): void => console.log(`   ${l}`);
  const fc = await startFailoverCluster('rfob', SETTINGS, log, { ceph: true });
  try {
    const guests: Guest[] = await placeGuests(fc, memories(c.guests), c.rbd ? { rbd: RBD } : {});
    if (c.rbd) log(`every marker written ${sec(await waitMarkersWritten(fc.cluster, guests, (g) => rbdMarker(RBD, g)))} s after the guests ran`);
    // Let one keepalive pass with the guests running, so the figures include them.
    await realClock.sleep(SETTINGS.keepaliveInterval * 1000 + 500);
    const monLeader = await cephMonLeader(fc.cluster);
    log(`Ceph mon leader before the failure: ${monLeader}${monLeader === 'hv3' ? ' (the victim: the survivors elect a new one before any map change commits)' : ''}`);
    const sampler = new MarkerBootSampler(fc.cluster, guests);
    let t: FailoverTimeline;
    try {
      t = await failVictim(fc, guests, 180_000 + SETTINGS.keepaliveInterval * SETTINGS.fenceIntervals * 1000);
    } finally {
      await sampler.stop(c.rbd ? 10_000 : 0);
    }
    for (const l of formatTimeline(t)) log(l);
    const p = phases(t);
    const notes: string[] = [];
    const fl = lockFlushes(fc.others, t.failureAt);
    const osd = await osdDownLog(fc.cluster, t.failureAt);
    log('Ceph cluster log (OSD down):');
    for (const e of osd) log(`  ${Number.isNaN(e.at) ? '?' : `+${sec(e.at - t.failureAt, 2)} s`} ${e.message}`);
    const osdDown = osd.find((e) => !Number.isNaN(e.at))?.at;
    if (c.rbd) {
      log('cephd lock flushes:');
      for (const l of fl.lines) log(`  ${describeLine(l, t.failureAt)}`);
      for (const g of guests) {
        const b = sampler.seen.get(g.name);
        log(`${g.name} marker boot ${b ? `"${b.text}" at +${sec(b.at - t.failureAt, 2)} s (fenced + ${sec(t.fencedAt === undefined ? undefined : b.at - t.fencedAt, 2)} s)` : 'never seen'}`);
        if (!b) notes.push(`${g.name}: no marker boot line`);
        else if (b.text !== rbdMarker(RBD, g)) notes.push(`${g.name} read "${b.text}", not its marker`);
        const errs = sampler.errors.get(g.name);
        if (errs) notes.push(`${g.name} disk errors: ${errs.join('; ')}`);
      }
      if (fl.failed.length > 0) notes.push(`lock flush failures: ${fl.failed.join('; ')}`);
    }
    const boots = [...sampler.seen.values()].map((b) => b.at);
    const healthyDead = falseDeaths(t.events, fc.victim.name);
    if (healthyDead.length > 0) notes.push(`healthy node declared dead: ${healthyDead.map((e) => e.detail).join('; ')}`);
    if (t.runningElsewhere.size < guests.length) notes.push(`${guests.length - t.runningElsewhere.size} guest(s) never ran elsewhere`);
    if (fc.watch.violations.length > 0) notes.push(`DOUBLE RUN: ${fc.watch.violations.join('; ')}`);
    if (!t.quorumAtFence) notes.push('fence without quorum sample');
    const fenced = t.fencedAt;
    return {
      config: c, run, windowMs: t.windowMs, detect: p.detect, fence: p.fence, restart: p.restart, total: p.total,
      markerBoot: c.rbd && fenced !== undefined && boots.length === guests.length ? Math.max(...boots) - fenced : undefined,
      forceFlush: fenced !== undefined && fl.forceAt !== undefined ? fl.forceAt - fenced : undefined,
      markedDown: fenced !== undefined && fl.markedDownAt !== undefined ? fl.markedDownAt - fenced : undefined,
      forceRemoved: fl.forceRemoved, osdDown: osdDown === undefined ? undefined : osdDown - t.failureAt, notes,
    };
  } finally {
    await fc.close();
  }
}

function table(rows: Row[]): string {
  const head = '| config | run | window s | detect s | fence s | restart s | total s | total − window s | ≤ 5 s? | failure → OSD down (Ceph log) s | fenced → marker boot s | fenced → OSDs marked down by cephd s | fenced → force flush done s (locks removed) | notes |';
  const sep = '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|';
  const lines = rows.map((r) => {
    const b = beyond(r);
    const met = b === undefined ? 'no data' : b <= TARGET_MS ? 'yes' : 'NO';
    const flush = r.config.rbd ? `${sec(r.forceFlush, 2)} (${r.forceRemoved})` : '—';
    return `| ${r.config.guests} × ${r.config.rbd ? 'RBD' : 'diskless'} | ${r.run} | ${sec(r.windowMs)} | ${sec(r.detect, 2)} | ${sec(r.fence, 2)} | ${sec(r.restart, 2)} | ${sec(r.total, 2)} | ${sec(b, 2)} | ${met} | ${sec(r.osdDown, 2)} | ${r.config.rbd ? sec(r.markerBoot, 2) : '—'} | ${sec(r.markedDown, 2)} | ${flush} | ${r.notes.join('; ')} |`;
  });
  return [head, sep, ...lines].join('\n');
}

function summary(rows: Row[]): string[] {
  const med = (id: string): number | undefined => median(rows.filter((r) => r.config.id === id).map(beyond).filter((x): x is number => x !== undefined));
  const base = med('diskless-1');
  return ['rbd-1', 'rbd-5', 'diskless-1'].filter((id) => rows.some((r) => r.config.id === id)).map((id) => {
    const m = med(id);
    const ratio = m !== undefined && base !== undefined && base > 0 && id !== 'diskless-1' ? ` (${(m / base).toFixed(2)}× diskless-1)` : '';
    return `${id}: median total − window ${sec(m, 2)} s${ratio}`;
  });
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const runs = args.includes('--runs') ? Number(args[args.indexOf('--runs') + 1]) || undefined : undefined;
  const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined;
  const missing = missingPrerequisites();
  if (missing.length > 0) throw new Error(`prerequisites missing:\n${missing.join('\n')}`);
  const stale = staleBuilds();
  if (stale.length > 0) console.log(`warning: dist older than src in ${stale.join(', ')} (the services run from dist)`);
  const rows: Row[] = [];
  const configs = CONFIGS.filter((c) => !only || only.split(',').includes(c.id));
  // Interleaved (rbd-1, rbd-5, diskless-1, rbd-1, …) so a drift of the machine's load hits every kind.
  const maxRuns = Math.max(...configs.map((c) => runs ?? c.runs));
  for (let run = 1; run <= maxRuns; run++) {
    for (const c of configs) {
      if (run > (runs ?? c.runs)) continue;
      try {
        rows.push(await runOne(c, run));
      } catch (err) {
        console.log(`   run failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
        rows.push({ config: c, run, windowMs: SETTINGS.keepaliveInterval * SETTINGS.fenceIntervals * 1000, forceRemoved: 0, notes: [`run failed: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`] });
      }
    }
  }
  console.log(`\n${table(rows)}`);
  console.log(`\n${summary(rows).join('\n')}`);
}

await main();
