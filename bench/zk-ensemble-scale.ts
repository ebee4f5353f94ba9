/**
 * Scale against a real ensemble (issue 17 item 5): N = 10, 30, 100 simulated nodes (3
 * coordinators), 50 VMs each, against a real 3-server ZooKeeper 3.8 ensemble on loopback with the
 * timing PVC ships (tests/support/zk-ensemble.ts). Each node runs the real keepaliled and vmd
 * in this process with the real clock, each on its own real ZK session (tests/support/real-zk-node.ts),
 * vmd on its FakeHypervisor reporting the node's 50 VMs as running. After a settle (start-up reads
 * done: the request rate stable), a steady window is measured: ZK requests/s and watch
 * notifications/s (counted under the real client), keepalive lateness p50/p99 (real time), false
 * fences, keepalive multi latency p50/p99 (client side) and the servers' own (`mntr`), each JVM's
 * CPU, this process's CPU and the load average. Prints a markdown table. A benchmark, not a test.
 *
 *   node --max-old-space-size=8192 --conditions=development --import tsx bench/zk-ensemble-scale.ts
 *     [--nodes 10,30,100] [--settle 30] [--max-settle 300] [--measure 60] [--heap 512] [--stagger-ms 50]
 *     [--vmd-read-timeout 1000]   (vmd's production value; keepaliled keeps its own)
 *     [--no-vmd]   (keepaliled alone on every node: the keepalive and fence path without vmd's watches)
 *     [--reconnect-probe]   (instead: per N, one vmd alone, its connection dropped once: the re-read cost)
 */
import { cpus, loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { realClock, silentLogger } from '@pvc/runtime';
import { connectZk, type ZkClient } from '@pvc/zk';
import { WireStats } from '../tests/support/counting-real-zk.js';
import { RealZkNode } from '../tests/support/real-zk-node.js';
import { clusterVms, reconnectProbe, seedCluster, type ProbeResult } from '../tests/support/real-zk-cluster.js';
import { ZkTestEnsemble } from '../tests/support/zk-ensemble.js';
import { cpuSeconds } from './proc.js';

const VMS_PER_NODE = 50;
const COORDINATORS = 3;
/** The original's defaults (inventory §3.1, §3.2): keepalive every 5 s, fenced after 6 missed. */
const INTERVAL_S = 5;
const FENCE_INTERVALS = 6;

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? dflt) : dflt;
}

const pct = (xs: readonly number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : (s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number);
};
const fmt = (v: number | undefined, d = 1): string => (v === undefined || Number.isNaN(v) ? '—' : v.toFixed(d));


/** `mntr` lines as numbers. */
function mntr(text: string): Map<string, number> {
  return new Map(text.split('\n').map((l) => l.split('\t')).filter((p) => p.length === 2).map(([k, v]) => [k as string, Number(v)]));
}

interface Row {
  n: number; settleS: number; windowS: number; ops: number; notes: number; errors: number; byKind: string;
  lateP50: number; lateP99: number; keepalives: number; kaMissed: number; falseFences: number; falseFencesAll: number;
  kaMultiP50: number; kaMultiP99: number; vmdMultiP99: number; srvUpdP99: number; srvUpdAvg: number; fsyncAvg: number; fsyncMax: number;
  zkCpu: number[]; benchCpu: number; load: string; watches: number; rssMiB: number;
  lost: string; lagP99: number; lagMax: number; byPath: string;
}

/** Waits `minS`, then until two successive 5-s request counts are within 15% (start-up reads done). */
async function settle(stats: WireStats, minS: number, maxS: number, ready: () => boolean): Promise<number> {
  const t0 = realClock.now();
  await realClock.sleep(minS * 1000);
  let prev = -1;
  let last = stats.total();
  const lag = monitorEventLoopDelay({ resolution: 20 });
  lag.enable();
  while ((realClock.now() - t0) / 1000 < maxS) {
    await realClock.sleep(5_000);
    const now = stats.total();
    const bucket = now - last;
    last = now;
    console.error(`  settle ${((realClock.now() - t0) / 1000).toFixed(0)} s: ${(bucket / 5).toFixed(0)} req/s, ${stats.errors} failed, event-loop lag p99 ${(lag.percentile(99) / 1e6).toFixed(0)} ms max ${(lag.max / 1e6).toFixed(0)} ms`);
    lag.reset();
    if (ready() && prev > 0 && Math.abs(bucket - prev) / prev < 0.15) break;
    prev = bucket;
  }
  lag.disable();
  return (realClock.now() - t0) / 1000;
}

interface Opts { noVmd: boolean; maxSettleS: number; settleS: number; measureS: number; heapMiB: number; staggerMs: number; vmdReadTimeoutMs: number }

async function runOne(n: number, o: Opts): Promise<Row> {
  const ensemble = await ZkTestEnsemble.start({ heapMiB: o.heapMiB });
  const cleanup = (): void => void ensemble.destroy().finally(() => process.exit(130));
  process.once('SIGINT', cleanup);
  process.once('SIGTERM', cleanup);
  const stats = new WireStats();
  const names = Array.from({ length: n }, (_, i) => `hv${i + 1}`);
  const vms = clusterVms(names, VMS_PER_NODE);
  const fences: { node: string; atMs: number }[] = [];
  let kaMissed = 0;
  const kaTimes = new Map<string, number[]>();
  const nodes: RealZkNode[] = [];
  let admin: ZkClient | undefined;
  let rss = 0;
  try {
    admin = await connectZk({ hosts: ensemble.hosts, clock: realClock });
    const seedT = realClock.now();
    await seedCluster(admin, names, vms, COORDINATORS);
    console.error(`N=${n}: ensemble up, seeded ${n} nodes + ${n * VMS_PER_NODE} VMs in ${((realClock.now() - seedT) / 1000).toFixed(1)} s`);
    const env = {
      hosts: ensemble.hosts, coordinators: names.slice(0, COORDINATORS), keepaliveIntervalS: INTERVAL_S, fenceIntervals: FENCE_INTERVALS,
      stats, logger: silentLogger(), vmdReadTimeoutMs: o.vmdReadTimeoutMs, vmd: !o.noVmd,
      event: (_node: string, e: { kind: string; node: string }) => {
        if (e.kind === 'node-dead') fences.push({ node: e.node, atMs: realClock.now() });
        if (e.kind === 'keepalive-failed') kaMissed++;
      },
      keepalive: (node: string, atMs: number) => kaTimes.set(node, [...(kaTimes.get(node) ?? []), atMs]),
    };
    for (const name of names) {
      const node = new RealZkNode(name, vms.get(name) ?? [], env);
      nodes.push(node);
      node.start();
      await realClock.sleep(o.staggerMs);
    }
    const sampler = setInterval(() => (rss = Math.max(rss, process.memoryUsage().rss)), 1000);
    const settleS = await settle(stats, o.settleS, o.maxSettleS, () => names.every((m) => (kaTimes.get(m)?.length ?? 0) >= 2));
    // The window: counters, CPU and the servers' statistics from here.
    await ensemble.fourLetter('srst');
    const m0 = (await ensemble.fourLetter('mntr')).map(mntr);
    const s0 = stats.snapshot();
    const pids = ensemble.pids();
    const c0 = pids.map(cpuSeconds);
    const b0 = process.cpuUsage();
    const t0 = realClock.now();
    const fences0 = fences.length;
    const lost0 = new Map(stats.suspended);
    const lag = monitorEventLoopDelay({ resolution: 20 });
    lag.enable();
    stats.recording = true;
    stats.byPath = new Map();
    await realClock.sleep(o.measureS * 1000);
    stats.recording = false;
    lag.disable();
    const t1 = realClock.now();
    const windowS = (t1 - t0) / 1000;
    const b1 = process.cpuUsage(b0);
    const zkCpu = pids.map((p, i) => (100 * (cpuSeconds(p) - (c0[i] as number))) / windowS);
    const s1 = stats.snapshot();
    const m1 = (await ensemble.fourLetter('mntr')).map(mntr);
    const load = loadavg().map((l) => l.toFixed(1)).join(' / ');
    clearInterval(sampler);
    const late = [...kaTimes.values()].flatMap((ts) => ts.flatMap((t, i) => {
      const prev = ts[i - 1];
      return prev !== undefined && prev >= t0 && t <= t1 ? [t - prev - INTERVAL_S * 1000] : [];
    }));
    const diff = (k: string, i: number): number => (m1[i]?.get(k) ?? 0) - (m0[i]?.get(k) ?? 0);
    const fsyncCnt = [0, 1, 2].reduce((a, i) => a + diff('zk_cnt_fsynctime', i), 0);
    const fsyncSum = [0, 1, 2].reduce((a, i) => a + diff('zk_sum_fsynctime', i), 0);
    const updCnt = [0, 1, 2].reduce((a, i) => a + diff('zk_cnt_updatelatency', i), 0);
    const updSum = [0, 1, 2].reduce((a, i) => a + diff('zk_sum_updatelatency', i), 0);
    const top = [...(stats.byPath ?? [])].sort((a, b) => b[1] - a[1]).slice(0, 8);
    const lost = ['vmd', 'keepaliled'].map((l) => (stats.suspended.get(l) ?? 0) - (lost0.get(l) ?? 0)).join('/');
    console.error(`  connections lost (whole run): ${[...stats.suspended].map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}`);
    if (stats.errorCodes.size > 0) console.error(`  failed requests (whole run): ${[...stats.errorCodes].map(([k, v]) => `${k} ${v}`).join(', ')}`);
    const kinds = Object.entries(s1.ops).map(([k, v]) => [k, (v - s0.ops[k as keyof typeof s0.ops]) / windowS] as const);
    return {
      n, settleS, windowS, ops: (s1.total - s0.total) / windowS, notes: (s1.notifications - s0.notifications) / windowS,
      errors: s1.errors - s0.errors, byKind: kinds.filter(([, v]) => v > 0).map(([k, v]) => `${k} ${v.toFixed(1)}`).join(', '),
      lateP50: pct(late, 50), lateP99: pct(late, 99), keepalives: late.length, kaMissed,
      falseFences: fences.length - fences0, falseFencesAll: fences.length,
      kaMultiP50: pct(stats.multiMs.get('keepaliled') ?? [], 50), kaMultiP99: pct(stats.multiMs.get('keepaliled') ?? [], 99),
      vmdMultiP99: pct(stats.multiMs.get('vmd') ?? [], 99),
      srvUpdP99: Math.max(...m1.map((m) => m.get('zk_p99_updatelatency') ?? NaN)), srvUpdAvg: updCnt > 0 ? updSum / updCnt : NaN,
      fsyncAvg: fsyncCnt > 0 ? fsyncSum / fsyncCnt : NaN, fsyncMax: Math.max(...m1.map((m) => m.get('zk_max_fsynctime') ?? NaN)),
      zkCpu, benchCpu: (100 * (b1.user + b1.system)) / 1e6 / windowS, load,
      watches: m1.reduce((a, m) => a + (m.get('zk_watch_count') ?? 0), 0), rssMiB: Math.round(rss / 2 ** 20),
      lost, lagP99: lag.percentile(99) / 1e6, lagMax: lag.max / 1e6,
      byPath: top.map(([k, v]) => `${k} ${(v / windowS).toFixed(1)}`).join('; '),
    };
  } finally {
    await Promise.all(nodes.map((nd) => nd.stop()));
    await admin?.close();
    await ensemble.destroy();
    process.removeListener('SIGINT', cleanup);
    process.removeListener('SIGTERM', cleanup);
  }
}

/** The original's notifications/s: the issue's ~12,000/s at 100 nodes scaled as N² (docs/benchmarks.md, sim section). */
const original = (n: number): number => 1.2 * n * n;

function report(rows: readonly Row[]): void {
  console.log(`\nreal 3-server ensemble${opts.noVmd ? ', keepaliled only (no vmd)' : ''}, vmd read timeout ${opts.vmdReadTimeoutMs} ms, keepalive ${INTERVAL_S} s, fence after ${FENCE_INTERVALS}, ${VMS_PER_NODE} VMs/node, ${cpus().length} cores\n`);
  console.log('| N | VMs | settle s | ZK req/s | req/s ÷ N | notif/s | original notif/s (derived) | KA late p50/p99 ms (n) | KA missed | false fences (window/all) | conn. lost vmd/KA | loop lag p99/max ms | KA multi p50/p99 ms | vmd multi p99 ms | server update p99 / avg ms | fsync avg/max ms | ZK CPU % (3 JVMs) | bench CPU % | load 1/5/15 | watches | RSS MiB |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(`| ${r.n} | ${r.n * VMS_PER_NODE} | ${fmt(r.settleS, 0)} | ${fmt(r.ops)} | ${fmt(r.ops / r.n, 2)} | ${fmt(r.notes)} | ${original(r.n).toFixed(0)} | ${fmt(r.lateP50, 0)}/${fmt(r.lateP99, 0)} (${r.keepalives}) | ${r.kaMissed} | ${r.falseFences}/${r.falseFencesAll} | ${r.lost} | ${fmt(r.lagP99, 0)}/${fmt(r.lagMax, 0)} | ${fmt(r.kaMultiP50)}/${fmt(r.kaMultiP99)} | ${fmt(r.vmdMultiP99)} | ${fmt(r.srvUpdP99, 0)} / ${fmt(r.srvUpdAvg, 2)} | ${fmt(r.fsyncAvg, 1)}/${fmt(r.fsyncMax, 0)} | ${r.zkCpu.map((c) => fmt(c, 0)).join(' + ')} | ${fmt(r.benchCpu, 0)} | ${r.load} | ${r.watches} | ${r.rssMiB} |`);
  }
  console.log('\nrequests by kind, per second (window):');
  for (const r of rows) console.log(`  N=${r.n}: ${r.byKind} (failed: ${r.errors})\n    top paths: ${r.byPath}`);
}

const sizes = arg('nodes', '10,30,100').split(',').map(Number);
const opts = { maxSettleS: Number(arg('max-settle', '300')), settleS: Number(arg('settle', '30')), measureS: Number(arg('measure', '60')), heapMiB: Number(arg('heap', '512')), staggerMs: Number(arg('stagger-ms', '50')),
  vmdReadTimeoutMs: Number(arg('vmd-read-timeout', '1000')), noVmd: process.argv.includes('--no-vmd') };
/** `--reconnect-probe`: per N, one node alone against the ensemble, vmd's connection dropped once. */
async function probeOne(n: number): Promise<ProbeResult> {
  const ensemble = await ZkTestEnsemble.start({ heapMiB: opts.heapMiB });
  let admin: ZkClient | undefined;
  try {
    admin = await connectZk({ hosts: ensemble.hosts, clock: realClock });
    const names = Array.from({ length: n }, (_, i) => `hv${i + 1}`);
    const vms = clusterVms(names, VMS_PER_NODE);
    await seedCluster(admin, names, vms, COORDINATORS);
    const last = names[n - 1] as string;
    return await reconnectProbe(ensemble.hosts, last, vms.get(last) ?? [], n * VMS_PER_NODE, { coordinators: names.slice(0, COORDINATORS) });
  } finally {
    await admin?.close();
    await ensemble.destroy();
  }
}

if (process.argv.includes('--reconnect-probe')) {
  console.log('\none vmd alone (a hypervisor of an N-node cluster), its ZK connection dropped once, session kept\n');
  console.log('| N | VMs in cluster | start-up reads | start-up ms | start-up CPU ms | vmd connections lost in start-up | re-reads | time to re-read ms | CPU ms | longest event-loop block ms | connections lost again | load 1/5/15 |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const n of sizes) {
    const r = await probeOne(n);
    console.log(`| ${n} | ${r.vms} | ${r.startupReads} | ${r.startupMs.toFixed(0)} | ${r.startupCpuMs.toFixed(0)} | ${r.startupLost} | ${r.reads} | ${r.ms.toFixed(0)} | ${r.cpuMs.toFixed(0)} | ${r.maxBlockMs.toFixed(0)} | ${r.relost} | ${loadavg().map((l) => l.toFixed(1)).join(' / ')} |`);
  }
  process.exit(0);
}

const rows: Row[] = [];
for (const n of sizes) {
  const t = realClock.now();
  rows.push(await runOne(n, opts));
  console.error(`N=${n} done in ${((realClock.now() - t) / 1000).toFixed(0)} s`);
  report(rows);
}
