/**
 * Failover benchmark (issue 3 item 9): on a real 3-host harness cluster running the node services,
 * fail the host of 1 or 10 guests (network cut + power off through its BMC) and print, per
 * configuration, the detection window, detect (failure → `dead`), fence (`dead` → fenced), restart
 * (fenced → every guest running elsewhere per virsh), total, total − window, and the original's
 * figure derived from its code (inventory §3.3, §3.4, §12). Root only; ~6 min.
 *
 *   node --conditions=development --import tsx bench/failover.ts [--runs N] [--only 1x1-3] [--isolate] [--post-ms N]
 *
 * By default the other hosts' ZK sessions stay where they connected (some on the victim's own ZK
 * server); `--isolate` moves them off it first (moveZkClientsOffVictim), to compare.
 */
import { realClock } from '@pvc/runtime';
import { paths } from '@pvc/zk';
import { missingPrerequisites } from '../tests/cluster/harness/index.js';
import { failVictim, falseDeaths, moveZkClientsOffVictim, phases, placeGuests, startFailoverCluster, type FailoverTimeline } from '../tests/cluster/failover-scenario.js';
import { formatTimeline } from '../tests/cluster/failover-report.js';
import { staleBuilds } from '../tests/cluster/pvc-node.js';

interface Config {
  guests: number;
  interval: number;
  fenceIntervals: number;
}

interface Row extends Config {
  /** Whether the other hosts' ZK sessions were moved off the victim's server first. */
  isolate: boolean;
  windowMs: number;
  detect?: number;
  fence?: number;
  restart?: number;
  total?: number;
  firstTick?: number;
  notes: string[];
}

const CONFIGS: Config[] = [
  { guests: 1, interval: 1, fenceIntervals: 3 },
  { guests: 10, interval: 1, fenceIntervals: 3 },
  { guests: 1, interval: 5, fenceIntervals: 6 },
  { guests: 10, interval: 5, fenceIntervals: 6 },
];

/**
 * The original's time beyond its window (inventory §3.2–3.4, §12): the fence monitor runs at the next
 * keepalive (≤ 1 interval, ½ on average), 6 saving throws of one interval, `power off`, 5 s, status,
 * `power on`, 2 s, status, one more interval, then the recovery writes. ipmitool calls not counted.
 */
function originalBeyondWindowMs(c: Config): number {
  return (0.5 + 6 + 1) * c.interval * 1000 + 7_000;
}

/** 10 guests of 64–96 MiB (a spread, so the planner's memory figures matter), or one of 96 MiB. */
const memories = (n: number): number[] => (n === 1 ? [96] : Array.from({ length: n }, (_, i) => 72 + ((i * 8) % 32)));

const sec = (ms: number | undefined): string => (ms === undefined ? '—' : (ms / 1000).toFixed(1));

async function memoryCheck(fc: Awaited<ReturnType<typeof startFailoverCluster>>, need: number): Promise<string> {
  const free = await Promise.all(fc.others.map(async (h) => `${h.name} memfree ${(await fc.zk.read(paths.node(h.name).memFree)) ?? '?'} MiB`));
  return `guests need ${need} MiB; ${free.join(', ')}`;
}

async function runOne(c: Config, run: number, isolate: boolean, postMs: number): Promise<Row> {
  const label = `${c.guests} guest(s), interval ${c.interval}, fence_intervals ${c.fenceIntervals}, run ${run}${postMs > 0 ? `, victim POST ${postMs} ms` : ''}`;
  console.log(`\n== ${label}`);
  const fc = await startFailoverCluster('fovb', { keepaliveInterval: c.interval, fenceIntervals: c.fenceIntervals, successfulFence: 'migrate' }, (l) => console.log(`   ${l}`));
  try {
    const mem = memories(c.guests);
    const guests = await placeGuests(fc, mem);
    console.log(`   ${await memoryCheck(fc, mem.reduce((a, b) => a + b, 0))}`);
    // Let one keepalive pass with the guests running, so the figures include them.
    await realClock.sleep(c.interval * 1000 + 500);
    if (postMs > 0) await fc.victim.setPostDelay(postMs);
    if (isolate) console.log(`   other hosts' ZK sessions moved off ${fc.victim.name}'s server (${await moveZkClientsOffVictim(fc)} restart(s))`);
    const t: FailoverTimeline = await failVictim(fc, guests, 180_000 + c.interval * c.fenceIntervals * 1000);
    for (const l of formatTimeline(t)) console.log(`   ${l}`);
    const p = phases(t);
    const notes: string[] = postMs > 0 ? [`victim's services start ${postMs} ms after its power-on`] : [];
    const healthyDead = falseDeaths(t.events, fc.victim.name);
    if (healthyDead.length > 0) notes.push(`healthy node declared dead: ${healthyDead.map((e) => e.detail).join('; ')}`);
    if (t.runningElsewhere.size < guests.length) notes.push(`${guests.length - t.runningElsewhere.size} guest(s) never ran elsewhere`);
    if (fc.watch.violations.length > 0) notes.push(`DOUBLE RUN: ${fc.watch.violations.join('; ')}`);
    if (!t.quorumAtFence) notes.push('fence without quorum sample');
    return { ...c, isolate, windowMs: t.windowMs, detect: p.detect, fence: p.fence, restart: p.restart, total: p.total, firstTick: p.firstTick, notes };
  } finally {
    await fc.close();
  }
}

function table(rows: Row[]): string {
  const head = '| guests | interval × fence_intervals | ZK sessions off victim | window s | detect s | fence s | restart s | total s | total − window s | first tick s | original: total − window s (derived) | notes |';
  const sep = '|---|---|---|---|---|---|---|---|---|---|---|---|';
  const lines = rows.map((r) => {
    const beyond = r.total === undefined ? undefined : r.total - r.windowMs;
    return `| ${r.guests} | ${r.interval} × ${r.fenceIntervals} | ${r.isolate ? 'yes' : 'no'} | ${sec(r.windowMs)} | ${sec(r.detect)} | ${sec(r.fence)} | ${sec(r.restart)} | ${sec(r.total)} | ${sec(beyond)} | ${sec(r.firstTick)} | ~${sec(originalBeyondWindowMs(r))} | ${r.notes.join('; ')} |`;
  });
  return [head, sep, ...lines].join('\n');
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const runs = Number(args[args.indexOf('--runs') + 1] ?? 1) || 1;
  const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined;
  // By default the ZK sessions stay where they connected (other hosts' sessions may be on the
  // victim's server, as in real life); --isolate moves them off the victim's server first.
  const isolate = args.includes('--isolate');
  const postMs = args.includes('--post-ms') ? Number(args[args.indexOf('--post-ms') + 1]) : 0;
  if (!Number.isFinite(postMs) || postMs < 0) throw new Error('--post-ms takes a number of ms ≥ 0');
  const missing = missingPrerequisites();
  if (missing.length > 0) throw new Error(`prerequisites missing:\n${missing.join('\n')}`);
  const stale = staleBuilds();
  if (stale.length > 0) console.log(`warning: dist older than src in ${stale.join(', ')} (the services run from dist)`);
  const rows: Row[] = [];
  for (const c of CONFIGS.filter((x) => !only || only === `${x.guests}x${x.interval}-${x.fenceIntervals}`)) {
    for (let run = 1; run <= runs; run++) rows.push(await runOne(c, run, isolate, postMs));
  }
  console.log(`\n${table(rows)}`);
}

await main();
