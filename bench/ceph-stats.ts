/**
 * Benchmark (issue 13 item 7): the keepalive's duration with and without Ceph stats on the primary.
 *
 * A real one-host Ceph 16 with a mgr (tests/integration/ceph/ceph-host.ts), a real ZooKeeper, and
 * the built cephd running in the Ceph host's namespace (as tests/integration/ceph/stats.test.ts
 * starts it). What is measured, in alternating phases of `--phase-s` seconds, cephd secondary
 * ("off": no stats) then primary ("on": a stats pass every 5 s, 8 Ceph commands at once):
 *
 * - keepalive: keepaliled's own keepalive run (`KeepaliveLoop.tick()` from apps/keepaliled, in this
 *   process: the figure gathering — /proc, and peers that answer at once — and the one ZooKeeper
 *   transaction), every 200 ms, so a phase samples ticks that coincide with a pass as often as a
 *   5 s keepalive would over a long run. keepaliled's keepalive does not call cephd: what a stats
 *   pass can do to it is take CPU and ZooKeeper time.
 * - GetStorageStats: cephd's answer over its socket (what keepaliled may ask with a ~1 s deadline).
 * - cephd CPU: its own and its reaped children's (the `ceph`/`rados` processes), from /proc.
 *
 * All of it twice, in the same run: cephd with its librados client (the default: the stats' `ceph`
 * commands are monitor/manager commands from its own process) and with `PVC_CEPH_CLIENT=cli`
 * (a `ceph` process per command), so the two can be compared as ratios.
 *
 * Then the stats pass itself in this process (the same code, a real Exec run in the namespace):
 * `--passes` passes with cephd secondary, and two with the monitor stopped (SIGSTOP: commands
 * hang until their 3 s deadline).
 *
 *   flock /tmp/pvc-cluster.lock node --conditions=development --import tsx bench/ceph-stats.ts \
 *     [--phase-s 30] [--rounds 2] [--passes 10]
 *
 * Root; needs the build (apps/cephd/dist), ceph-mon/-mgr/-osd, ceph-common and zookeeper. ~4 min.
 */
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { CEPHD, PRIMARY_ROLE, rpcClient } from '@pvc/rpc';
import { createExec, realClock, silentLogger, type Exec } from '@pvc/runtime';
import { cephStatsStateJson, connectZk, newNodeObject, type ZkClient } from '@pvc/zk';
import { createCephCli } from '../apps/cephd/src/host/ceph-cli.js';
import { statsPass } from '../apps/cephd/src/stats/pass.js';
import { FigureGatherer } from '../apps/keepaliled/src/keepalive/figures.js';
import { KeepaliveLoop } from '../apps/keepaliled/src/keepalive/keepalive.js';
import { procHostStats } from '../apps/keepaliled/src/host/host-stats.js';
import { FakePeers } from '../apps/keepaliled/src/testing/fakes.js';
import { CephHost } from '../tests/integration/ceph/ceph-host.js';
import { bridgePortIntoNamespace } from '../tests/integration/ceph/ns-bridge.js';
import { pidsOf } from '../tests/integration/ceph/run.js';
import { startService } from '../tests/integration/services/service-process.js';
import { waitUntil } from '../tests/support/wait.js';
import { ZkTestServer } from '../tests/support/zk-server.js';
import { cpuSecondsWithChildren } from './proc.js';

const { values } = parseArgs({ options: { 'phase-s': { type: 'string', default: '30' }, rounds: { type: 'string', default: '2' }, passes: { type: 'string', default: '10' } } });
const PHASE_MS = Number(values['phase-s']) * 1000;
const ROUNDS = Number(values.rounds);
const PASSES = Number(values.passes);
const SAMPLE_MS = 200;

const pct = (xs: readonly number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? NaN;
};
const f1 = (x: number): string => x.toFixed(1);



interface Phase {
  name: string;
  keepaliveMs: number[];
  storageStatsMs: number[];
  cpuPerS: number;
  passes: number;
}

async function main(): Promise<void> {
  const ceph = await CephHost.start({ withMgr: true });
  const zkServer = await ZkTestServer.start();
  const cleanups: (() => Promise<unknown>)[] = [() => ceph.destroy(), () => zkServer.destroy()];
  try {
    const zk = await connectZk({ hosts: ['127.0.0.1'], port: zkServer.port, clock: realClock });
    cleanups.unshift(() => zk.close());
    for (const p of ['/ceph/osds', '/ceph/volumes', '/ceph/snapshots', '/ceph/pools/vms', '/nodes']) await zk.ensurePath(p);
    await zk.write([['/ceph/pools/vms/pgs', '8'], ['/ceph/pools/vms/tier', 'default']]);
    const o = newNodeObject({ name: 'bench1', daemonMode: 'coordinator', nowMs: realClock.now(), staticData: '2 x x x', pvcVersion: 'bench', ipmi: { hostname: '', username: '', password: '' } });
    await zk.createObject(o.root, o.entries);
    const meta = JSON.parse(await ceph.mustInHost('ceph', ['osd', 'metadata', '--format', 'json'])) as { hostname: string }[];
    const node = (meta[0]?.hostname ?? '').split('.')[0] ?? '';
    const bridge = await bridgePortIntoNamespace(ceph.hostNs, zkServer.port);
    cleanups.unshift(() => bridge.close());
    const figures = new FigureGatherer({ peers: new FakePeers(realClock), host: procHostStats, logger: silentLogger(), clock: realClock });
    const keepalive = new KeepaliveLoop({
      node: 'bench1', zk, clock: realClock, logger: silentLogger(), figures, events: () => undefined,
      settings: { intervalMs: 5_000, figuresDeadlineMs: 1_000, logKeepalives: false, logClusterDetails: false },
    });
    await keepalive.tick();

    const byClient = new Map<string, Phase[]>();
    for (const cephClient of ['librados', 'cli']) {
      const cephd = await startService('cephd', [
        ['pvc.node', node],
        ['pvc.system.configuration.networking.cluster.address', 'None'],
        ['pvc.system.configuration.networking.storage.address', 'None'],
        ['pvc.functions.enable_storage', true],
        ['pvc.cluster.coordinators', ['localhost']],
        ['pvc.database', { zookeeper: { port: zkServer.port } }],
      ], { ...ceph.env, PVC_CEPH_CLIENT: cephClient }, ['ip', 'netns', 'exec', ceph.hostNs]);
      const client = rpcClient(cephd.target, CEPHD);
      const role = rpcClient(cephd.target, PRIMARY_ROLE);
      try {
        await waitUntil(() => zk.read('/ceph/osds/0/node'), { what: 'cephd recording its OSD', timeoutMs: 30_000, until: (v) => v === node });
        const phases: Phase[] = [];
        for (let round = 0; round < ROUNDS; round++) {
          for (const on of [false, true]) {
            await role.setPrimary({ primary: on, reason: 'bench' }, { deadlineMs: 10_000 });
            phases.push(await phase(`${on ? 'on' : 'off'} ${round + 1}`, zk, keepalive, () => client.getStorageStats({}, { deadlineMs: 1_000 }), cephd.pid ?? 0));
          }
        }
        await role.setPrimary({ primary: false, reason: 'bench done' }, { deadlineMs: 10_000 });
        byClient.set(cephClient, phases);
      } finally {
        client.close();
        role.close();
        await cephd.cleanup();
      }
    }

    const passes = await passDurations(ceph, zk);
    report(byClient, passes);
  } finally {
    for (const c of cleanups) await c().catch((err: unknown) => console.error('cleanup:', err));
  }
}

async function phase(name: string, zk: ZkClient, keepalive: KeepaliveLoop, storageStats: () => Promise<unknown>, cephdPid: number): Promise<Phase> {
  const p: Phase = { name, keepaliveMs: [], storageStatsMs: [], cpuPerS: 0, passes: 0 };
  const times = new Set<number>();
  const cpu0 = cpuSecondsWithChildren(cephdPid);
  const t0 = realClock.now();
  while (realClock.now() - t0 < PHASE_MS) {
    const s = performance.now();
    const ok = await keepalive.tick();
    const k = performance.now();
    if (!ok) throw new Error('a keepalive was not written');
    await storageStats();
    const g = performance.now();
    p.keepaliveMs.push(k - s);
    p.storageStatsMs.push(g - k);
    const raw = await zk.read('/ceph/stats_state');
    if (raw) times.add(cephStatsStateJson.decode(raw, '/ceph/stats_state').time);
    await realClock.sleep(Math.max(0, SAMPLE_MS - (performance.now() - s)));
  }
  p.cpuPerS = (cpuSecondsWithChildren(cephdPid) - cpu0) / ((realClock.now() - t0) / 1000);
  p.passes = name.startsWith('on') ? times.size : 0;
  return p;
}

/** Stats passes in this process: with Ceph answering, then with the monitor stopped. */
async function passDurations(ceph: CephHost, zk: ZkClient): Promise<{ up: number[]; down: number[]; downStale: string[] }> {
  const base = createExec();
  const exec: Exec = {
    run: (cmd, args, opts = {}) => base.run('ip', ['netns', 'exec', ceph.hostNs, cmd, ...args], { ...opts, env: { ...opts.env, ...ceph.env } }),
    spawn: (cmd, args, opts) => base.spawn(cmd, args, opts),
  };
  const deps = { zk, cli: createCephCli(exec), clock: realClock, commandTimeoutMs: 3_000, zkTimeoutMs: 1_000 };
  const up: number[] = [];
  for (let i = 0; i < PASSES; i++) {
    const r = await statsPass(deps);
    if (Object.keys(r.stale).length > 0) console.error(`pass ${i}: stale ${JSON.stringify(r.stale)}`);
    up.push(r.durationMs);
  }
  const mons = await pidsOf(ceph.hostNs, 'ceph-mon');
  for (const pid of mons) process.kill(pid, 'SIGSTOP');
  const down: number[] = [];
  let downStale: string[] = [];
  try {
    for (let i = 0; i < 2; i++) {
      const r = await statsPass(deps);
      down.push(r.durationMs);
      downStale = Object.keys(r.stale).sort();
    }
  } finally {
    for (const pid of mons) process.kill(pid, 'SIGCONT');
  }
  return { up, down, downStale };
}

function report(byClient: Map<string, Phase[]>, passes: { up: number[]; down: number[]; downStale: string[] }): void {
  const when = new Date().toISOString();
  console.log(`\nceph-stats bench ${when}; ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), load ${loadavg().map(f1).join(' ')}`);
  console.log(`phases of ${PHASE_MS / 1000} s, a keepalive run + a GetStorageStats call every ${SAMPLE_MS} ms`);
  const onCpu = (phases: Phase[]): number => {
    const on = phases.filter((p) => p.name.startsWith('on'));
    return on.reduce((s, p) => s + p.cpuPerS, 0) / Math.max(1, on.length);
  };
  for (const [cephClient, phases] of byClient) {
    console.log(`\n== cephd's Ceph client: ${cephClient}`);
    reportPhases(phases);
  }
  const [lib, cli] = [byClient.get('librados') ?? [], byClient.get('cli') ?? []];
  console.log(`\ncephd CPU while primary: librados ${onCpu(lib).toFixed(3)} s/s, cli ${onCpu(cli).toFixed(3)} s/s (librados/cli ${(onCpu(lib) / onCpu(cli)).toFixed(2)}×)`);
  console.log(`stats pass (the tools, in this process), Ceph answering (${passes.up.length}): p50 ${f1(pct(passes.up, 50))} ms, max ${f1(Math.max(...passes.up))} ms`);
  console.log(`stats pass (the tools), monitor stopped (${passes.down.length}): ${passes.down.map(f1).join(', ')} ms; stale: ${passes.downStale.join(', ')}`);
}

function reportPhases(phases: Phase[]): void {
  console.log('phase | keepalive ms p50 / p90 / p99 / max (n) | GetStorageStats ms p50 / p99 / max | cephd CPU s/s | passes');
  for (const p of phases) {
    const k = p.keepaliveMs;
    const g = p.storageStatsMs;
    console.log(`${p.name} | ${f1(pct(k, 50))} / ${f1(pct(k, 90))} / ${f1(pct(k, 99))} / ${f1(Math.max(...k))} (${k.length}) | ${f1(pct(g, 50))} / ${f1(pct(g, 99))} / ${f1(Math.max(...g))} | ${p.cpuPerS.toFixed(3)} | ${p.passes}`);
  }
  const all = (on: boolean, f: (p: Phase) => number[]): number[] => phases.filter((p) => p.name.startsWith(on ? 'on' : 'off')).flatMap(f);
  const [kOff, kOn] = [all(false, (p) => p.keepaliveMs), all(true, (p) => p.keepaliveMs)];
  const [gOff, gOn] = [all(false, (p) => p.storageStatsMs), all(true, (p) => p.storageStatsMs)];
  for (const [what, off, on] of [['keepalive', kOff, kOn], ['GetStorageStats', gOff, gOn]] as const) {
    console.log(`${what}: on/off p50 ${(pct(on, 50) / pct(off, 50)).toFixed(2)}×, p99 ${(pct(on, 99) / pct(off, 99)).toFixed(2)}×, max ${f1(Math.max(...off))} → ${f1(Math.max(...on))} ms`);
  }
}

await main();
