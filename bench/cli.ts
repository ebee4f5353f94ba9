/**
 * Benchmark: how quickly `pvc` answers on a cluster of a given size (issue 5).
 *
 * A real Zookeeper with 3 nodes and N VMs (default 200). Measured:
 * - process start: `pvc --version` (built binary) against a bare `node -e 0` (baseline, same run);
 * - end to end as a user runs them (spawned built binary, connect included): `pvc vm list`,
 *   `pvc cluster status`, `pvc vm info <vm>`, `pvc vm start <vm>`;
 * - in-process `vm list -f json` against the minimum: the same keys read with raw parallel
 *   `zk.read`s on an open session (baseline, same run) — the ratio is the CLI's own overhead.
 *
 * Run: node --conditions=development --import tsx bench/cli.ts [--vms 200] [--runs 7]
 * Needs the build (scripts/setup.sh) and the zookeeper package. No root needed.
 */
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { realClock } from '@pvc/runtime';
import { connectZk, DOMAIN_KEYS, newDomainObject, newNodeObject, paths } from '@pvc/zk';
import { runCli } from '../apps/cli/src/cli.js';
import { ZkTestServer } from '../tests/support/zk-server.js';

const ROOT = new URL('../', import.meta.url).pathname;
const BIN = join(ROOT, 'apps/cli/dist/main.js');
const { values } = parseArgs({ options: { vms: { type: 'string', default: '200' }, runs: { type: 'string', default: '7' } } });
const VMS = Number(values.vms);
const RUNS = Number(values.runs);

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

function timeSpawn(args: string[], env: NodeJS.ProcessEnv): number[] {
  const out: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    execFileSync(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'inherit'] });
    out.push(performance.now() - t0);
  }
  return out;
}

async function timeAsync(fn: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return out;
}

const xml = (name: string, uuid: string): string =>
  `<domain type='qemu'><name>${name}</name><uuid>${uuid}</uuid><memory unit='MiB'>256</memory><vcpu>1</vcpu>` +
  `<devices><interface type='network'><mac address='52:54:00:00:${uuid.slice(-4, -2)}:${uuid.slice(-2)}'/></interface></devices></domain>`;

async function main(): Promise<void> {
  const server = await ZkTestServer.start();
  const zk = await connectZk({ hosts: [server.hostPort], clock: realClock });
  try {
    const env = { ...process.env, PVC_ZK: server.hostPort, NO_COLOR: '1' };
    execFileSync(process.execPath, [BIN, 'cluster', 'init'], { env });
    for (const name of ['hv1', 'hv2', 'hv3']) {
      const n = newNodeObject({ name, daemonMode: 'coordinator', nowMs: Date.now(), staticData: '8 6.1 x86_64 x86_64', pvcVersion: '0.1.0', ipmi: { hostname: '', username: '', password: '' } });
      await zk.createObject(n.root, n.entries);
      await zk.write([[paths.node(name).daemonState, 'run'], [paths.node(name).domainState, 'ready'], [paths.node(name).memTotal, '65536']]);
    }
    for (let i = 0; i < VMS; i++) {
      const uuid = `be000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
      const d = newDomainObject({ uuid, name: `vm${i}`, node: `hv${(i % 3) + 1}`, state: 'stop', xml: xml(`vm${i}`, uuid) });
      await zk.createObject(d.root, d.entries);
    }
    const bare = timeSpawn(['-e', '0'], env);
    const version = timeSpawn([BIN, '--version'], env);
    const list = timeSpawn([BIN, 'vm', 'list'], env);
    const status = timeSpawn([BIN, 'cluster', 'status'], env);
    const info = timeSpawn([BIN, 'vm', 'info', 'vm7'], env);
    const start = timeSpawn([BIN, 'vm', 'start', 'vm7'], env);
    const sink = { write: () => true };
    const io = { stdout: sink, stderr: sink, env, clock: realClock, readFile: (p: string) => readFile(p, 'utf8') };
    const inProcess = await timeAsync(() => runCli(['vm', 'list', '-f', 'json'], io));
    const raw = await timeAsync(async () => {
      const uuids = await zk.children(paths.domains);
      await Promise.all(uuids.flatMap((u) => [paths.domain(u).root, ...Object.values(DOMAIN_KEYS).map((k) => `${paths.domain(u).root}/${k}`)].map((p) => zk.read(p))));
    });
    const f = (xs: number[]): string => `median ${median(xs).toFixed(0)} ms (min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)})`;
    console.log(`pvc on a real Zookeeper, 3 nodes, ${VMS} VMs, ${RUNS} runs each`);
    console.log(`  node -e 0 (baseline):          ${f(bare)}`);
    console.log(`  pvc --version:                 ${f(version)}  = ${(median(version) / median(bare)).toFixed(2)}× bare node`);
    console.log(`  pvc vm list (spawned):         ${f(list)}`);
    console.log(`  pvc cluster status (spawned):  ${f(status)}`);
    console.log(`  pvc vm info vm7 (spawned):     ${f(info)}`);
    console.log(`  pvc vm start vm7 (spawned):    ${f(start)}`);
    console.log(`  raw ZK reads of every domain key (baseline, open session): ${f(raw)}`);
    console.log(`  vm list -f json in-process (open session per run): ${f(inProcess)}  = ${(median(inProcess) / median(raw)).toFixed(2)}× raw reads`);
  } finally {
    await zk.close();
    await server.destroy();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
