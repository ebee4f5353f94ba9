/**
 * Benchmark: node services start-up and footprint (issue 3, item 9).
 *
 * - Start-up: supervisor process spawned (built dist, standalone) → daemon state `init` → `run`
 *   (keepaliled's first keepalive), with Zookeeper already up; first start (new node object) and
 *   restarts. Baseline in the same run: a bare `node -e 0` start.
 * - Footprint: after the services have idled, resident memory and CPU of each of the five
 *   processes over a sampling window. Baseline: an idle bare Node process.
 *
 * Run: node --conditions=development --import tsx bench/services.ts [--runs 5] [--idle 20]
 * Needs the build (scripts/setup.sh) and the zookeeper package. No root needed.
 *
 * `--networking` (root; issue 11 item 5): the same start-up with real host networking, in a
 * throwaway network namespace (the bench re-runs itself there, Zookeeper included) holding a veth
 * pair `ens4`/`ens4p`, with the sample's networking section (cluster and storage `by-id` on ens4):
 * the first start creates `brcluster` and checks and adds the addresses (duplicate-address check
 * included), netd loads its nftables ruleset; the restarts find them in place. No footprint.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { paths, type ZkClient } from '@pvc/zk';
import { ZkTestServer } from '../tests/support/zk-server.js';
import { median, sleep, waitValue } from './zk-wait.js';
import { freePort } from '../tests/support/ports.js';
import { initClusterTree, supervisorConfig, zkClient } from '../tests/integration/supervisor/support.js';
import { sampleDoc } from '@pvc/config/testing';

const ROOT = new URL('../', import.meta.url).pathname;
const MAIN = join(ROOT, 'apps/supervisor/dist/main.js');
const { values } = parseArgs({
  options: { runs: { type: 'string', default: '5' }, idle: { type: 'string', default: '20' }, networking: { type: 'boolean', default: false } },
});
const NETWORKING = values.networking === true;
const NS = process.env.PVC_BENCH_NETNS;
const RUNS = Number(values.runs);
const IDLE_S = Number(values.idle);
const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim() || 100);


function bareNodeStartMs(): number {
  const t0 = performance.now();
  spawnSync(process.execPath, ['-e', '0']);
  return performance.now() - t0;
}

/** Child pids of `pid` (from /proc). */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        return Number(readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1]?.split(' ')[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

interface Sample {
  rssMiB: number;
  /** Proportional set size: shared pages (the node binary, libraries) divided among their users. */
  pssMiB: number;
  /** Anonymous memory (heap, stacks): what this process alone costs. */
  anonMiB: number;
  cpuTicks: number;
  name: string;
}

function rollup(pid: number, key: string): number {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  return Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? NaN) / 1024;
}

function sample(pid: number): Sample {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').find((a) => a.includes('/apps/')) ?? 'node';
  const name = /apps\/([a-z]+)\//.exec(cmd)?.[1] ?? cmd;
  return {
    rssMiB: Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024, pssMiB: rollup(pid, 'Pss'), anonMiB: rollup(pid, 'Pss_Anon'),
    cpuTicks: Number(stat[11]) + Number(stat[12]), name,
  };
}

async function startOnce(cfg: string, zk: ZkClient): Promise<{ child: ChildProcess; initMs: number; runMs: number }> {
  await zk.write([[paths.node('hv1').daemonState, 'stop']]).catch(() => undefined);
  const t0 = performance.now();
  const child = spawn(process.execPath, [MAIN, '--config', cfg, '--external-services'], { stdio: ['ignore', 'ignore', 'inherit'] });
  const tInit = await waitValue(zk, paths.node('hv1').daemonState, 'init', 30_000);
  const tRun = await waitValue(zk, paths.node('hv1').daemonState, 'run', 30_000);
  return { child, initMs: tInit - t0, runMs: tRun - t0 };
}

async function stop(child: ChildProcess): Promise<void> {
  const done = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await done;
}

async function main(): Promise<void> {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run scripts/setup.sh (it builds everything)`);
  const server = await ZkTestServer.start();
  const dir = mkdtempSync(join(tmpdir(), 'pvc-bench-'));
  const zk = await zkClient(server.port);
  try {
    await initClusterTree(zk);
    const sample = sampleDoc() as { pvc: { coordinator: unknown; cluster: { networks: unknown }; system: { configuration: { networking: unknown } } } };
    const networking: [string, unknown][] = NETWORKING
      ? [
          ['pvc.functions.enable_networking', true],
          ['pvc.coordinator', sample.pvc.coordinator],
          ['pvc.cluster.networks', sample.pvc.cluster.networks],
          ['pvc.system.configuration.networking', sample.pvc.system.configuration.networking],
          ['pvc.system.configuration.networking.sriov_enable', false],
        ]
      : [];
    const cfg = supervisorConfig(dir, server.port, await freePort(), [['pvc.system.configuration.logging.stdout_logging', false], ...networking]);
    const bare = Array.from({ length: 5 }, bareNodeStartMs);
    const first = await startOnce(cfg, zk);
    await stop(first.child);
    const restarts: { initMs: number; runMs: number }[] = [];
    let last: ChildProcess | undefined;
    for (let i = 0; i < RUNS; i++) {
      const r = await startOnce(cfg, zk);
      restarts.push(r);
      if (i < RUNS - 1) await stop(r.child);
      else last = r.child;
    }
    const bareMs = median(bare);
    const runMs = median(restarts.map((r) => r.runMs));
    console.log(`\n## Start-up (ZK up, built dist, standalone, ${RUNS} restarts + first start)`);
    console.log(`bare node start (baseline)        ${bareMs.toFixed(0)} ms`);
    console.log(`first start → init / run           ${first.initMs.toFixed(0)} / ${first.runMs.toFixed(0)} ms`);
    console.log(`restart → init (median)            ${median(restarts.map((r) => r.initMs)).toFixed(0)} ms`);
    console.log(`restart → run  (median, max)       ${runMs.toFixed(0)} ms, ${Math.max(...restarts.map((r) => r.runMs)).toFixed(0)} ms  (target < 3000 ms; ${(runMs / bareMs).toFixed(1)}× a bare node start)`);
    if (NETWORKING) {
      const addrs = spawnSync('ip', ['-br', '-4', 'address', 'show', 'dev', 'brcluster'], { encoding: 'utf8' }).stdout.trim();
      const nft = spawnSync('nft', ['list', 'tables'], { encoding: 'utf8' }).stdout.trim().replace(/\n/g, ', ');
      console.log(`host networking (in namespace ${NS}): ${addrs || 'brcluster missing!'}; nft tables: ${nft || 'none!'}`);
    } else await footprint(last as ChildProcess);
    await stop(last as ChildProcess);
  } finally {
    await zk.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function footprint(supervisor: ChildProcess): Promise<void> {
  const idle = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  await sleep(IDLE_S * 1000);
  const pids = [supervisor.pid as number, ...childrenOf(supervisor.pid as number), idle.pid as number];
  const before = pids.map(sample);
  const t0 = performance.now();
  await sleep(IDLE_S * 1000);
  const secs = (performance.now() - t0) / 1000;
  const after = pids.map(sample);
  idle.kill();
  console.log(`\n## Footprint (idle ${IDLE_S} s, then sampled over ${secs.toFixed(0)} s)`);
  const total = { rss: 0, pss: 0, anon: 0 };
  const fmt = (x: number): string => x.toFixed(1).padStart(6);
  console.log(`${'process'.padEnd(26)}    RSS      PSS     anon  (MiB)   CPU`);
  for (const [i, a] of after.entries()) {
    const b = before[i] as Sample;
    const cpu = ((a.cpuTicks - b.cpuTicks) / CLK_TCK / secs) * 100;
    const label = i === after.length - 1 ? 'bare idle node (baseline)' : a.name;
    if (i < after.length - 1) {
      total.rss += a.rssMiB;
      total.pss += a.pssMiB;
      total.anon += a.anonMiB;
    }
    console.log(`${label.padEnd(26)} ${fmt(a.rssMiB)}   ${fmt(a.pssMiB)}   ${fmt(a.anonMiB)}         ${cpu.toFixed(2).padStart(5)} %`);
  }
  const baseline = after.at(-1)?.rssMiB ?? 1;
  console.log(`${'all five services'.padEnd(26)} ${fmt(total.rss)}   ${fmt(total.pss)}   ${fmt(total.anon)}`);
  console.log(`memory of the five together (sum of PSS: shared pages counted once) ${total.pss.toFixed(0)} MiB = ${(total.pss * 1.048576).toFixed(0)} MB (target < 250 MB); sum of RSS ${total.rss.toFixed(0)} MiB counts the shared node binary five times; ${(total.pss / baseline).toFixed(1)}× one bare node process's RSS`);
}

/** Runs this bench again inside a fresh network namespace with a veth pair ens4/ens4p (root). */
function inNamespace(): number {
  const ns = `pvc-bench-${process.pid}`;
  const ip = (...args: string[]): void => {
    const r = spawnSync('ip', args, { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`ip ${args.join(' ')}: ${r.stderr.trim()}`);
  };
  ip('netns', 'add', ns);
  try {
    ip('-n', ns, 'link', 'set', 'lo', 'up');
    ip('-n', ns, 'link', 'add', 'ens4', 'type', 'veth', 'peer', 'name', 'ens4p');
    ip('-n', ns, 'link', 'set', 'ens4p', 'up');
    const r = spawnSync('ip', ['netns', 'exec', ns, process.execPath, ...process.execArgv, ...process.argv.slice(1)], {
      stdio: 'inherit', env: { ...process.env, PVC_BENCH_NETNS: ns },
    });
    return r.status ?? 1;
  } finally {
    spawnSync('ip', ['netns', 'del', ns]);
  }
}

if (NETWORKING && NS === undefined) process.exit(inNamespace());

await main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
