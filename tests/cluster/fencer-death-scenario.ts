/**
 * A fencer that dies mid-fence (issue 14 item 1), on a real 4-host harness cluster (hv1–hv3
 * coordinators with the 3-server Zookeeper ensemble, hv4 a hypervisor), shared by
 * `fencer-death.test.ts` and `bench/fencer-death.ts`.
 *
 * A guest runs on every host. hv4 fails (network cut, powered off through its BMC), and its BMC is
 * then made slow (1 s a request), so the fence of hv4 takes a few seconds. The moment hv4 is declared
 * dead the coordinator holding the fence lock — the fencer — is failed the same way. Measured: from
 * the fencer's death until the guests of both dead hosts run on the survivors (virsh), against the
 * target 2 × window + 5 s; whether the fencer was also the Zookeeper leader; the keepaliled lines.
 */
import { createExec, realClock } from '@pvc/runtime';
import { paths, sortContenders } from '@pvc/zk';
import { ipmitool, waitFor } from './harness/index.js';
import type { ClusterHost } from './harness/index.js';
import { keepaliledEvents, type LogEvent } from './failover-logs.js';
import { placeGuestsOn, startFailoverCluster, type FailoverCluster, type Guest } from './failover-scenario.js';

const rootExec = createExec();

/** The detection window of the scenario: interval 1 s × fence_intervals 3. */
export const FENCER_DEATH_SETTINGS = { keepaliveInterval: 1, fenceIntervals: 3, successfulFence: 'migrate' as const };
/** The slow BMC of the first victim, per request. */
export const SLOW_BMC_MS = 1_000;

/** What one run showed; times are epoch ms of this machine. */
export interface FencerDeathRun {
  windowMs: number;
  boundMs: number;
  firstVictim: string;
  fencer: string | undefined;
  /** The ZK leader just before the failures, and whether it was the fencer. */
  leader: string | undefined;
  leaderWasFencer: boolean;
  victimFailedAt: number;
  victimDeadAt: number | undefined;
  fencerDiedAt: number | undefined;
  /** Per guest of the two dead hosts: where and when it first ran on a survivor. */
  running: Map<string, { host: string; at: number }>;
  guests: Guest[];
  /** Last guest running elsewhere − fencer's death. */
  totalMs: number | undefined;
  events: LogEvent[];
  doubleRuns: string[];
}

/** Starts the 4-host cluster with a guest on every host (fvm1 on hv1 … fvm4 on hv4). */
export async function startFencerDeathCluster(name: string, log: (l: string) => void): Promise<{ fc: FailoverCluster; byHost: Map<string, Guest> }> {
  const fc = await startFailoverCluster(name, FENCER_DEATH_SETTINGS, log, { hosts: 4 });
  try {
    const byHost = new Map<string, Guest>();
    for (const [i, h] of fc.cluster.hosts.entries()) byHost.set(h.name, (await placeGuestsOn(fc, h, [96], i + 1))[0]!);
    return { fc, byHost };
  } catch (err) {
    await fc.close();
    throw err;
  }
}

async function failHost(host: ClusterHost): Promise<void> {
  await host.cutNetwork();
  const off = await ipmitool(rootExec, host.ipmi, ['chassis', 'power', 'off']);
  if (off.exitCode !== 0) throw new Error(`ipmitool power off ${host.name}: ${off.stderr.trim()}`);
}

/** The node holding the fence lock now (our lock identifier is the node name), if any. */
async function fenceLockHolder(fc: FailoverCluster): Promise<string | undefined> {
  const lock = paths.config.fenceLock;
  const [first] = sortContenders(await fc.zk.children(lock).catch(() => []));
  return first === undefined ? undefined : fc.zk.read(`${lock}/${first}`).catch(() => undefined);
}

/** Fails hv4, then the fencer mid-fence; waits (≤ `timeoutMs`) for both hosts' guests to run elsewhere. */
export async function killFencerMidFence(fc: FailoverCluster, byHost: Map<string, Guest>, log: (l: string) => void, timeoutMs = 60_000): Promise<FencerDeathRun> {
  const victim = fc.victim;
  const windowMs = FENCER_DEATH_SETTINGS.keepaliveInterval * FENCER_DEATH_SETTINGS.fenceIntervals * 1000;
  const leader = (await fc.cluster.zk.status()).find((s) => s.mode === 'leader')?.host;
  const run: FencerDeathRun = {
    windowMs, boundMs: 2 * windowMs + 5_000, firstVictim: victim.name, fencer: undefined, leader, leaderWasFencer: false,
    victimFailedAt: 0, victimDeadAt: undefined, fencerDiedAt: undefined, running: new Map(), guests: [], totalMs: undefined, events: [], doubleRuns: [],
  };
  let fencerHost: ClusterHost | undefined;
  let declared: () => void = () => undefined;
  const dead = new Promise<void>((resolve) => (declared = resolve));
  const unwatch = fc.zk.watchData(paths.node(victim.name).daemonState, (v) => {
    if (v?.data === 'dead' && run.victimFailedAt > 0 && run.victimDeadAt === undefined) {
      run.victimDeadAt = realClock.now();
      declared();
    }
  });
  try {
    run.victimFailedAt = realClock.now();
    await failHost(victim);
    await victim.setBmcDelay(SLOW_BMC_MS);
    log(`${victim.name} failed; its BMC now answers ${SLOW_BMC_MS} ms late`);
    // Woken by the watch itself (no polling delay): the fencer is killed while its BMC call is in flight.
    const bound = new AbortController();
    await Promise.race([dead, realClock.sleep(30_000, bound.signal).catch(() => undefined)]);
    bound.abort();
    if (run.victimDeadAt === undefined) throw new Error(`${victim.name} was never declared dead`);
    run.fencer = await fenceLockHolder(fc);
    fencerHost = fc.cluster.hosts.find((h) => h.name === run.fencer);
    if (!fencerHost) throw new Error(`no fencer holds the fence lock after ${victim.name} was declared dead (holder: ${run.fencer ?? 'none'})`);
    run.fencerDiedAt = realClock.now();
    await failHost(fencerHost);
    run.leaderWasFencer = leader === run.fencer;
    log(`${run.fencer} (the fencer${run.leaderWasFencer ? ', also the ZK leader' : `; ZK leader ${leader ?? '?'}`}) failed ${run.fencerDiedAt - run.victimDeadAt} ms after ${victim.name} was declared dead`);
    const survivors = fc.cluster.hosts.filter((h) => h !== victim && h !== fencerHost);
    run.guests = [byHost.get(victim.name)!, byHost.get(fencerHost.name)!];
    await waitFor('the guests of both dead hosts running on a survivor', timeoutMs, async () => {
      for (const g of run.guests) {
        if (run.running.has(g.name)) continue;
        const host = survivors.find((h) => fc.watch.firstSeen.has(`${g.uuid}@${h.name}`));
        if (host) run.running.set(g.name, { host: host.name, at: fc.watch.firstSeen.get(`${g.uuid}@${host.name}`)! });
      }
      return run.running.size === run.guests.length ? true : undefined;
    }, 100).catch(() => undefined);
  } finally {
    unwatch();
    await victim.setBmcDelay(0).catch(() => undefined);
  }
  if (run.running.size === run.guests.length && run.fencerDiedAt !== undefined) {
    run.totalMs = Math.max(...[...run.running.values()].map((r) => r.at)) - run.fencerDiedAt;
  }
  run.events = keepaliledEvents(fc.cluster.hosts.filter((h) => h !== victim && h !== fencerHost), run.victimFailedAt);
  run.doubleRuns = [...fc.watch.violations];
  return run;
}

/** Human lines of a run, times relative to the fencer's death. */
export function formatFencerDeath(r: FencerDeathRun): string[] {
  const rel = (at: number | undefined): string => (at === undefined || r.fencerDiedAt === undefined ? '—' : `${((at - r.fencerDiedAt) / 1000).toFixed(2)} s`);
  return [
    `first victim ${r.firstVictim}: failed ${rel(r.victimFailedAt)}, declared dead ${rel(r.victimDeadAt)}`,
    `fencer ${r.fencer ?? '?'} died at 0; ZK leader before: ${r.leader ?? '?'} (${r.leaderWasFencer ? 'the fencer' : 'not the fencer'})`,
    ...r.guests.map((g) => `${g.name}: ${r.running.has(g.name) ? `running on ${r.running.get(g.name)!.host} at ${rel(r.running.get(g.name)!.at)}` : 'NOT running elsewhere'}`),
    `total (fencer's death → last guest running elsewhere): ${r.totalMs === undefined ? '—' : `${(r.totalMs / 1000).toFixed(2)} s`}; bound 2 × window + 5 s = ${(r.boundMs / 1000).toFixed(1)} s`,
    ...r.events.map((e) => `  ${rel(e.at)} ${e.host} ${e.msg} ${e.detail}`),
  ];
}
