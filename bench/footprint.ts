/**
 * Benchmark: the bundled services (scripts/bundle.mjs, what the Debian package installs) against
 * today's `dist` tree, in the same run (issue 15 item 4).
 *
 * - Start-up: supervisor spawned (standalone, so it starts the four others) → daemon state `init`
 *   (registered) and → `run` (keepaliled's first keepalive), Zookeeper already up; rounds alternate
 *   between the two builds.
 * - Memory: after the last round of each build has idled, RSS and PSS (/proc/<pid>/smaps_rollup)
 *   of each of the five processes.
 *
 * The bundled supervisor finds its children as the package lays them out
 * (`<dir>/node_modules/@pvc/<svc>` → `<dir>/<svc>/main.mjs`), so this also runs standalone mode
 * from the package layout.
 *
 * Run: node --conditions=development --import tsx bench/footprint.ts [--runs 5] [--idle 15]
 * Needs the build (scripts/setup.sh) and the zookeeper package. No root needed.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { paths, type ZkClient } from '@pvc/zk';
import { ZkTestServer } from '../tests/support/zk-server.js';
import { median, sleep, waitValue } from './zk-wait.js';
import { freePort } from '../tests/support/ports.js';
import { initClusterTree, supervisorConfig, zkClient } from '../tests/integration/supervisor/support.js';

const ROOT = new URL('../', import.meta.url).pathname;
const DIST_MAIN = join(ROOT, 'apps/supervisor/dist/main.js');
const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' }, idle: { type: 'string', default: '15' } } });
const RUNS = Number(values.runs);
const IDLE_S = Number(values.idle);
const SERVICES = ['supervisor', 'netd', 'vmd', 'cephd', 'keepaliled'] as const;


/** Child pids of `pid` (from /proc). */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

interface Mem {
  rss: number;
  pss: number;
}

/** RSS and PSS (MiB) of a process, named by the service in its command line. */
function memory(pid: number): [string, Mem] {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kib = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? NaN) / 1024;
  const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  const name = SERVICES.find((s) => cmd.includes(`/${s}/`)) ?? `pid ${pid}`;
  return [name, { rss: kib('Rss'), pss: kib('Pss') }];
}

interface Build {
  label: string;
  main: string;
  runMs: number[];
  initMs: number[];
  mem?: Map<string, Mem>;
}

async function startOnce(b: Build, cfg: string, zk: ZkClient): Promise<ChildProcess> {
  await zk.write([[paths.node('hv1').daemonState, 'stop']]).catch(() => undefined);
  const t0 = performance.now();
  const child = spawn(process.execPath, [b.main, '--config', cfg, '--external-services'], { stdio: ['ignore', 'ignore', 'inherit'] });
  b.initMs.push((await waitValue(zk, paths.node('hv1').daemonState, 'init', 30_000)) - t0);
  b.runMs.push((await waitValue(zk, paths.node('hv1').daemonState, 'run', 30_000)) - t0);
  return child;
}

async function stop(child: ChildProcess): Promise<void> {
  const done = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await done;
}

async function main(): Promise<void> {
  if (!existsSync(DIST_MAIN)) throw new Error(`${DIST_MAIN} is missing: run scripts/setup.sh (it builds everything)`);
  const dir = mkdtempSync(join(tmpdir(), 'pvc-footprint-'));
  const bundled = join(dir, 'bundle');
  const built = spawnSync(process.execPath, [join(ROOT, 'scripts/bundle.mjs'), bundled], { encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`scripts/bundle.mjs failed: ${built.stderr}`);
  const builds: Build[] = [
    { label: 'dist tree', main: DIST_MAIN, runMs: [], initMs: [] },
    { label: 'bundled', main: join(bundled, 'supervisor/main.mjs'), runMs: [], initMs: [] },
  ];
  const server = await ZkTestServer.start();
  const zk = await zkClient(server.port);
  try {
    await initClusterTree(zk);
    const cfg = supervisorConfig(dir, server.port, await freePort(), [['pvc.system.configuration.logging.stdout_logging', false]]);
    // A first start of each (not counted) creates the node and warms the page cache.
    for (const b of builds) await stop(await startOnce(b, cfg, zk));
    for (const b of builds) b.runMs.length = b.initMs.length = 0;
    for (let i = 0; i < RUNS; i++) {
      for (const b of builds) {
        const child = await startOnce(b, cfg, zk);
        if (i === RUNS - 1) {
          await sleep(IDLE_S * 1000);
          b.mem = new Map([child.pid as number, ...childrenOf(child.pid as number)].map(memory));
        }
        await stop(child);
      }
    }
    report(builds[0] as Build, builds[1] as Build);
  } finally {
    await zk.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

function report(dist: Build, bundle: Build): void {
  const f = (x: number): string => x.toFixed(0).padStart(6);
  const r = (a: number, b: number): string => (b / a).toFixed(2).padStart(6);
  console.log(`\n## Start-up (ZK up, standalone supervisor + 4 children, ${RUNS} alternating rounds, ${cpus().length} CPUs)`);
  console.log(`${''.padEnd(34)}  dist  bundle  bundle/dist`);
  const rows: [string, number, number][] = [
    ['spawn → init (median, ms)', median(dist.initMs), median(bundle.initMs)],
    ['spawn → run  (median, ms)', median(dist.runMs), median(bundle.runMs)],
    ['spawn → run  (max, ms)', Math.max(...dist.runMs), Math.max(...bundle.runMs)],
  ];
  for (const [label, a, b] of rows) console.log(`${label.padEnd(34)}${f(a)}  ${f(b)}  ${r(a, b)}`);
  console.log(`\n## Memory after ${IDLE_S} s idle (MiB)`);
  console.log(`${'process'.padEnd(12)}  RSS dist  RSS bundle  ratio   PSS dist  PSS bundle  ratio`);
  const total = { dr: 0, br: 0, dp: 0, bp: 0 };
  for (const s of SERVICES) {
    const d = dist.mem?.get(s);
    const b = bundle.mem?.get(s);
    if (!d || !b) throw new Error(`${s} was not running in both builds`);
    total.dr += d.rss;
    total.br += b.rss;
    total.dp += d.pss;
    total.bp += b.pss;
    console.log(`${s.padEnd(12)}  ${f(d.rss)}    ${f(b.rss)}    ${r(d.rss, b.rss)}   ${f(d.pss)}    ${f(b.pss)}    ${r(d.pss, b.pss)}`);
  }
  console.log(`${'all five'.padEnd(12)}  ${f(total.dr)}    ${f(total.br)}    ${r(total.dr, total.br)}   ${f(total.dp)}    ${f(total.bp)}    ${r(total.dp, total.bp)}`);
}

await main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
