/**
 * Scale in the simulator (issue 17 items 4 and 6): clusters of 10, 30 and 100 nodes (3
 * coordinators) with 50 VMs each, built through the sim framework (parseCluster/parseEvents,
 * SimCluster: the real keepaliled and vmd per node on one FakeZkServer, in virtual time). After a
 * settle period: steady keepalives (measured), one node powered off (lost → dead → fenced → its
 * 50 VMs recreated elsewhere), a flush of one node, a primary handover. Prints per N: ZK ops/s and
 * watch notifications/s in the steady window (and per node), keepalive lateness p50/p99, false
 * fences, recovery, flush and handover times, wall time and peak RSS; and the original's derived
 * notification rate beside ours. A benchmark, not a test.
 *
 *   node --conditions=development --import tsx bench/sim-scale.ts [--nodes 10,30,100] [--measure 30]
 *     [--settle 20] [--steady-only]   (the steady window alone: no power-off, flush or handover)
 *     [--shapes]   (also print the ZK requests from the flush to the handover by kind and path shape)
 */
import { FakeZkStats, type FakeZkStatsSnapshot } from '@pvc/zk/testing';
import { parseCluster, parseEvents } from '../tests/sim/framework/scenario.js';
import { SimCluster } from '../tests/sim/framework/sim-cluster.js';

const VMS_PER_NODE = 50;
/** The original's defaults (inventory §3.1, §3.2): keepalive every 5 s, fenced after 6 missed. */
const INTERVAL_S = 5;
const FENCE_INTERVALS = 6;
/** `--shapes`: print the flush window's requests by path shape. */
const SHAPES = process.argv.includes('--shapes');
/** Virtual seconds before the steady window (`--settle`). */
let SETTLE_S = 20;

interface Row {
  n: number;
  steady: FakeZkStatsSnapshot;
  windowS: number;
  lateP50: number;
  lateP99: number;
  keepalives: number;
  falseFences: number;
  recoveryS: number | undefined;
  recovered: number;
  flushS: number | undefined;
  handoverS: number | undefined;
  /** ZK requests from the flush to the handover (the flusher re-reads the VMs at every step). */
  flushOps: number | undefined;
  violations: number;
  wallS: number;
  /** CPU seconds (user + system) of the whole run: less sensitive than wall time to a loaded machine. */
  cpuS: number;
  /** CPU seconds the simulator spent per virtual second of the steady window. */
  steadyCpuPerS: number;
  rssMiB: number;
}

/** CPU seconds (user + system) of this process so far. */
function cpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? dflt) : dflt;
}

function clusterYaml(n: number): string {
  const nodes = Array.from({ length: n }, (_, i) => `hv${i + 1}`);
  const vms = nodes.flatMap((node, i) => Array.from({ length: VMS_PER_NODE }, (_, j) => `vm${i + 1}x${j + 1}@${node}:256`));
  return [
    `nodes: ${nodes.join(' ')}`, `vms: ${vms.join(' ')}`, 'memory: 65536', `keepalive_interval: ${INTERVAL_S}`,
    `fence_intervals: ${FENCE_INTERVALS}`, 'settle: 30',
  ].join('\n');
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

/** Virtual seconds of the first log line after `fromS` matching `re`, the last one, and the count. */
function times(lines: readonly string[], re: RegExp, fromS: number): number[] {
  return lines.flatMap((l) => {
    const m = /^\s*([\d.]+)\s+(.*)$/.exec(l);
    const t = Number(m?.[1]);
    return m && t >= fromS && re.test(m[2] ?? '') ? [t] : [];
  });
}

/** The event times of a full run (virtual s), from the power-off of hvN. */
function timeline(powerOff: number): { flushAt: number; handoverAt: number } {
  const flushAt = powerOff + INTERVAL_S * FENCE_INTERVALS + 30;
  return { flushAt, handoverAt: flushAt + 30 };
}

/** False fences, recovery, flush and handover from the event log (so far). */
function phases(lines: readonly string[], n: number, powerOff: number): Pick<Row, 'falseFences' | 'recoveryS' | 'recovered' | 'flushS' | 'handoverS'> {
  const { flushAt, handoverAt } = timeline(powerOff);
  const victim = `hv${n}`;
  const fences = times(lines, / declares hv\d+ dead/, 0).length;
  const victimFences = times(lines, new RegExp(` declares ${victim} dead`), 0).length;
  const starts = times(lines, new RegExp(`^hv\\d+ vm-start vm${n}x\\d+ \\(created\\)`), powerOff).filter((t) => t < flushAt);
  const migratedOut = times(lines, new RegExp(`^hv${n - 1} vm-stop \\S+ \\(migrated to`), flushAt).filter((t) => t < handoverAt);
  const duties = times(lines, /^hv2 duties on/, handoverAt);
  return {
    falseFences: fences - victimFences,
    recoveryS: starts.length > 0 ? (starts.at(-1) as number) - powerOff : undefined, recovered: starts.length,
    flushS: migratedOut.length > 0 ? (migratedOut.at(-1) as number) - flushAt : undefined,
    handoverS: duties.length > 0 ? (duties[0] as number) - handoverAt : undefined,
  };
}

async function runOne(n: number, measureS: number, steadyOnly: boolean): Promise<Row> {
  const wall = performance.now();
  const cpu = cpuSeconds();
  const steadyCpu = { from: 0, to: 0 };
  let rss = process.memoryUsage().rss;
  const victim = `hv${n}`;
  const flushed = `hv${n - 1}`;
  const measureEnd = SETTLE_S + measureS;
  const powerOff = measureEnd;
  const { flushAt, handoverAt } = timeline(powerOff);
  // --steady-only: the steady window alone (for sizes too slow to simulate whole; see docs/benchmarks.md).
  const events = steadyOnly ? [] : parseEvents(`${powerOff} power ${victim} off\n${flushAt} flush ${flushed}\n${handoverAt} primary hv2\n`);
  const sim = new SimCluster(parseCluster(clusterYaml(n)));
  const intervalMs = INTERVAL_S * 1000;
  const lateness: number[] = [];
  const last = new Map<string, number>();
  const subscribed = new WeakSet<object>();
  let before: FakeZkStatsSnapshot | undefined;
  let steady: FakeZkStatsSnapshot | undefined;
  let flushFrom: FakeZkStatsSnapshot | undefined;
  let flushOps: number | undefined;
  sim.onStep = () => {
    const t = sim.elapsed();
    if (before === undefined && t >= SETTLE_S * 1000) {
      before = sim.server.stats.snapshot();
      steadyCpu.from = cpuSeconds();
    }
    if (steady === undefined && before !== undefined && t >= measureEnd * 1000) {
      steady = FakeZkStats.diff(before, sim.server.stats.snapshot());
      steadyCpu.to = cpuSeconds();
    }
    if (flushFrom === undefined && t >= flushAt * 1000) {
      flushFrom = sim.server.stats.snapshot();
      sim.server.stats.trackShapes = SHAPES;
    }
    if (flushOps === undefined && flushFrom !== undefined && t >= handoverAt * 1000) {
      flushOps = FakeZkStats.diff(flushFrom, sim.server.stats.snapshot()).totalOps;
      if (SHAPES) {
        sim.server.stats.trackShapes = false;
        console.log(`N=${n}: ZK requests from the flush to the handover by shape (top 15 of ${flushOps}):`);
        for (const [shape, count] of sim.server.stats.shapeCounts().slice(0, 15)) console.log(`  ${String(count).padStart(8)}  ${shape}`);
      }
    }
    if (t % 1000 === 0) rss = Math.max(rss, process.memoryUsage().rss);
    // Progress every 10 virtual s (a 100-node run is long): what has been measured so far.
    if (t % 10_000 === 0) {
      const so = steady ? ` | steady: ${fmt(steady.totalOps / measureS)} ops/s, ${fmt(steady.notifications / measureS)} notif/s, ${fmt((steadyCpu.to - steadyCpu.from) / measureS, 2)} CPU s per virtual s` : '';
      const ph = phases(sim.lines, n, powerOff);
      console.error(`N=${n} t=${t / 1000} s: wall ${fmt((performance.now() - wall) / 1000)} s, CPU ${fmt(cpuSeconds() - cpu)} s, RSS ${Math.round(rss / 2 ** 20)} MiB${so} | false fences ${ph.falseFences}, recovery ${fmt(ph.recoveryS)} s (${ph.recovered}), flush ${fmt(ph.flushS)} s, handover ${fmt(ph.handoverS)} s, ZK ops in the flush ${flushOps ?? '—'}`);
    }
    for (const node of sim.nodes.values()) {
      const k = node.keepalived;
      if (!k || subscribed.has(k)) continue;
      subscribed.add(k);
      last.delete(node.name);
      k.keepalive.onResult((ok) => {
        if (!ok) return;
        const now = sim.clock.now();
        const prev = last.get(node.name);
        // Lateness in the steady window only: how far past one interval after the previous write.
        const el = sim.elapsed();
        if (prev !== undefined && el >= SETTLE_S * 1000 && el <= measureEnd * 1000) lateness.push(now - prev - intervalMs);
        last.set(node.name, now);
      });
    }
  };
  await sim.setUp();
  await sim.run(events, steadyOnly ? measureEnd + 0.1 : undefined);
  if (!steadyOnly) await sim.invariants.final();
  await sim.tearDown();
  const ph = phases(sim.lines, n, powerOff);
  lateness.sort((a, b) => a - b);
  return {
    n, steady: steady ?? sim.server.stats.snapshot(), windowS: measureS,
    lateP50: percentile(lateness, 50), lateP99: percentile(lateness, 99), keepalives: lateness.length,
    ...ph, flushOps: steadyOnly ? undefined : flushOps,
    violations: sim.invariants.violations.length,
    wallS: (performance.now() - wall) / 1000, cpuS: cpuSeconds() - cpu,
    steadyCpuPerS: (steadyCpu.to - steadyCpu.from) / measureS, rssMiB: Math.round(rss / 2 ** 20),
  };
}

const fmt = (v: number | undefined, d = 1): string => (v === undefined || Number.isNaN(v) ? '—' : v.toFixed(d));

/** The original's notifications/s: the issue's ~12,000/s at 100 nodes scaled as N² (inventory §2.1 step 15, §3.1; docs/benchmarks.md). */
const original = (n: number): number => 1.2 * n * n;

const HEADER = [
  '| N | VMs | ZK ops/s | ops/s ÷ N | notif/s | notif/s ÷ N | original notif/s (derived) | KA late p50/p99 ms | false fences | recovery s (VMs) | flush s | handover s | ZK ops in flush | invariants | wall s | CPU s | steady CPU s per virtual s | RSS MiB |',
  '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
];

function line(r: Row): string {
  const ops = r.steady.totalOps / r.windowS;
  const notes = r.steady.notifications / r.windowS;
  return `| ${r.n} | ${r.n * VMS_PER_NODE} | ${fmt(ops)} | ${fmt(ops / r.n, 2)} | ${fmt(notes)} | ${fmt(notes / r.n, 2)} | ${original(r.n).toFixed(0)} | ${fmt(r.lateP50, 0)}/${fmt(r.lateP99, 0)} (${r.keepalives}) | ${r.falseFences} | ${fmt(r.recoveryS)} (${r.recovered}) | ${fmt(r.flushS)} | ${fmt(r.handoverS)} | ${r.flushOps ?? '—'} | ${r.violations} | ${fmt(r.wallS)} | ${fmt(r.cpuS)} | ${fmt(r.steadyCpuPerS, 2)} | ${r.rssMiB} |`;
}

function report(rows: readonly Row[]): void {
  console.log(`\nkeepalive ${INTERVAL_S} s, fence after ${FENCE_INTERVALS}, ${VMS_PER_NODE} VMs/node, steady window ${rows[0]?.windowS ?? 0} s after a ${SETTLE_S} s settle\n`);
  for (const h of HEADER) console.log(h);
  for (const r of rows) console.log(line(r));
  console.log('\noriginal (derived, not measured): every node builds a NodeInstance for every node with DataWatches on its');
  console.log('state/resource keys (../shared/reference/pvc-inventory.md §2.1 step 15); each keepalive writes ten of them in');
  console.log('one transaction (§3.1), so notifications/s = k × N² / interval. Printed: the issue\'s ~12,000/s at 100 nodes');
  console.log('(k = 6 at 5 s) scaled as 1.2 × N²; all ten keys watched would give 2 × N².');
  console.log('\nsteady ops by kind, per second:');
  for (const r of rows) {
    console.log(`  N=${r.n}: ${Object.entries(r.steady.ops).map(([k, v]) => `${k} ${(v / r.windowS).toFixed(1)}`).join(', ')}`);
  }
}

const sizes = arg('nodes', '10,30,100').split(',').map(Number);
const measureS = Number(arg('measure', '30'));
SETTLE_S = Number(arg('settle', String(SETTLE_S)));
const steadyOnly = process.argv.includes('--steady-only');
const rows: Row[] = [];
for (const n of sizes) {
  const row = await runOne(n, measureS, steadyOnly);
  rows.push(row);
  // Each row as soon as it is measured (a 100-node run is long), then the whole table.
  console.error(`N=${n} done in ${row.wallS.toFixed(1)} s\n${line(row)}`);
}
report(rows);
