/**
 * The failover scenario on a real harness cluster, shared by `failover.test.ts` and
 * `bench/failover.ts`: 3 hosts running the real node services, guests defined in ZK on the victim,
 * the victim's network cut and its power switched off through its BMC, and the timeline from the
 * failure to every guest running elsewhere recorded from ZK watches, virsh polls, console logs and
 * the keepaliled log lines.
 */
import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import { createExec, realClock } from '@pvc/runtime';
import { connectZk, paths, type ZkClient } from '@pvc/zk';
import { createCluster, fourLetterWord, ipmitool, waitFor } from './harness/index.js';
import type { Cluster, ClusterHost } from './harness/index.js';
import { DoubleRunWatch, FloatingAddressWatch, QuorumWatch } from './cluster-watch.js';
import { floatingAddresses, startPvc, waitFloatingOnPrimary, waitNodesRun, waitPrimary, writePvcConfig, type PvcNodeSettings } from './pvc-node.js';
import { pvcCli, type PvcCli } from './pvc-cli.js';
import { consoleOffsets, firstTickAfter, keepaliledEvents, type LogEvent } from './failover-logs.js';
import { HOST_POWER_SH } from './harness/run.js';
import { lifecycleEvents } from '../support/lifecycle-events.js';

/** A running 3-host cluster with the node services up on every host. */
export interface FailoverCluster {
  cluster: Cluster;
  zk: ZkClient;
  settings: PvcNodeSettings;
  victim: ClusterHost;
  others: ClusterHost[];
  watch: DoubleRunWatch;
  /**
   * Every host's addresses every 200 ms from before the node services start: no floating address
   * on two hosts at once. `close()` fails when it saw one (after tearing the cluster down).
   */
  floating: FloatingAddressWatch;
  quorum: QuorumWatch;
  /** The `pvc` command bound to the ensemble: every cluster action of the scenarios goes through it. */
  cli: PvcCli;
  /** ms from createCluster to every node `run` with a primary holding the floating addresses. */
  bootMs: number;
  primary: string;
  close(): Promise<void>;
}

/** One guest of the scenario. */
export interface Guest {
  name: string;
  uuid: string;
  memoryMiB: number;
}

/** ipmitool and friends run from the root namespace, which reaches every BMC on the ipmi bridge. */
const rootExec = createExec();

const uuidOf = (i: number): string => `f0000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

/** With PVC_FAILOVER_LOGS=<dir>, copies every host's logs (services, power, BMC, libvirt) there before teardown. */
async function keepLogs(cluster: Cluster): Promise<void> {
  const dest = process.env.PVC_FAILOVER_LOGS;
  if (!dest) return;
  for (const h of cluster.hosts) {
    await cp(h.dirs.log, join(dest, h.name, 'log'), { recursive: true }).catch(() => undefined);
    await cp(join(h.dirs.root, 'pvc', 'log'), join(dest, h.name, 'pvc-log'), { recursive: true }).catch(() => undefined);
  }
}

/** The victim must not be the ZK leader: restart its server until another one leads (returns restarts). */
export async function victimNotLeader(cluster: Cluster, victim: ClusterHost): Promise<number> {
  for (let restarts = 0; restarts < 5; restarts++) {
    const leader = (await cluster.zk.status()).find((s) => s.mode === 'leader')?.host;
    if (leader !== victim.name) return restarts;
    await victim.restartService('zookeeper');
    await cluster.zk.waitForAllServing(60_000);
  }
  throw new Error(`${victim.name} stays the Zookeeper leader after 5 restarts of its server`);
}

/** Other hosts' cluster addresses with a session on `host`'s ZK server (4lw `cons`). */
async function foreignZkClients(fc: FailoverCluster, host: ClusterHost): Promise<string[]> {
  const server = fc.cluster.zk.servers.find((x) => x.host === host.name);
  if (!server) return [];
  const cons = await fourLetterWord(server.address, server.clientPort, 'cons', 2_000);
  const ips = [...cons.matchAll(/^\s*\/([\d.]+):\d+\[\d\].*sid=/gm)].map((m) => m[1]!);
  return ips.filter((ip) => ip !== host.clusterIp && ip !== fc.cluster.rootIps.cluster);
}

/**
 * Moves the other hosts' ZK sessions off the victim's server (restarts it until `cons` lists none of
 * them; they reconnect elsewhere). Returns the restarts. Why: a session on a server that vanishes
 * without a RST goes blind for 2/3 of its 10 s timeout, longer than a 3 s detection window, and its
 * node is then declared dead although healthy (see docs/benchmarks.md, Failover). This isolates the
 * host failure itself; the benchmark also reports runs without it.
 */
export async function moveZkClientsOffVictim(fc: FailoverCluster): Promise<number> {
  for (let restarts = 0; restarts < 6; restarts++) {
    const foreign = await foreignZkClients(fc, fc.victim);
    if (foreign.length === 0) return restarts;
    await fc.victim.restartService('zookeeper');
    await fc.cluster.zk.waitForAllServing(60_000);
    await realClock.sleep(2_000);
  }
  throw new Error(`sessions of other hosts keep landing on ${fc.victim.name}'s Zookeeper server`);
}

/** Options of {@link startFailoverCluster}. */
export interface StartFailoverOptions {
  hosts?: number;
  ceph?: boolean;
  /**
   * Runs once the harness made the hosts and their networks, before any node config is written
   * (e.g. starts a PostgreSQL on the root namespace's cluster address); what it returns is merged
   * into the settings. A throw tears the cluster down; what it started is the caller's to stop.
   */
  prepare?: (cluster: Cluster) => Promise<Partial<PvcNodeSettings>>;
}

/**
 * Creates the cluster with bare links, starts the supervisor on every host (its bring-up gives the
 * hosts their bridges and addresses; the Zookeeper quorum forms once the coordinators have theirs),
 * initialises the ZK tree, waits for every node `run`, a primary, and the floating addresses on
 * that primary only, marks every node ready. The victim is the last host. The floating-address
 * watch runs from before the node services start until `close()`, which fails if it saw a floating
 * address on two hosts at once.
 */
export async function startFailoverCluster(
  name: string, settings: PvcNodeSettings, log: (l: string) => void = () => undefined, opts: StartFailoverOptions = {},
): Promise<FailoverCluster> {
  const t0 = realClock.now();
  const cluster = await createCluster({ name, hosts: opts.hosts ?? 3, coordinators: 3, bareLinks: true, ceph: opts.ceph ?? false, log });
  let zk: ZkClient | undefined;
  const floating = new FloatingAddressWatch(cluster.hosts, Object.values(floatingAddresses(cluster)));
  floating.start();
  try {
    if (opts.prepare) settings = { ...settings, ...(await opts.prepare(cluster)) };
    const victim = cluster.hosts[cluster.hosts.length - 1]!;
    // With Ceph the supervisor starts the mons and mgrs itself (through the host's systemctl shim).
    const services = cluster.ceph ? 'shim' : 'external';
    for (const h of cluster.hosts) await startPvc(h, writePvcConfig(cluster, h, settings), { services });
    await cluster.zk.waitForAllServing(120_000);
    log(`Zookeeper quorum after the node services' bring-up: ${((realClock.now() - t0) / 1000).toFixed(1)} s`);
    const restarts = await victimNotLeader(cluster, victim);
    log(`Zookeeper: ${(await cluster.zk.status()).map((s) => `${s.host}=${s.mode}`).join(' ')}${restarts ? ` (${victim.name}'s server restarted ${restarts}×)` : ''}`);
    // The observer talks to hv1's server only: a session on the victim's server would go blind at the cut.
    zk = await connectZk({ hosts: [cluster.zk.connectString.split(',')[0]!], clock: realClock });
    const cli = pvcCli(cluster.zk.connectString);
    await cli.ok('cluster', 'init', '--name', name);
    const names = cluster.hosts.map((h) => h.name);
    await waitNodesRun(zk, names, 120_000);
    const primary = await waitPrimary(zk, 60_000);
    await waitFloatingOnPrimary(zk, floating, 30_000);
    for (const n of names) await cli.ok('node', 'ready', n, '--wait', '--wait-timeout', '120');
    if (cluster.ceph) {
      await cluster.ceph.waitReady(120_000);
      log(`Ceph HEALTH_OK with pool ${cluster.ceph.pool} (size ${cluster.ceph.size}, min_size ${cluster.ceph.minSize}): ${((realClock.now() - t0) / 1000).toFixed(1)} s after createCluster`);
    }
    const watch = new DoubleRunWatch(cluster.hosts);
    const quorum = new QuorumWatch(cluster.zk);
    watch.start();
    quorum.start();
    const bootMs = realClock.now() - t0;
    log(`node services up on ${names.join(', ')} in ${(bootMs / 1000).toFixed(1)} s; primary ${primary} holds the floating addresses`);
    const zkc = zk;
    return {
      cluster, zk, settings, victim, others: cluster.hosts.slice(0, -1), watch, floating, quorum, cli, bootMs, primary,
      async close() {
        await watch.stop();
        await quorum.stop();
        await floating.stop();
        await zkc.close();
        await keepLogs(cluster);
        await cluster.destroy();
        log(`FloatingAddressWatch: ${floating.polls} polls, ${floating.changes.length} changes of holder, ${floating.violations.length} confirmed on two hosts, ${floating.unconfirmed.length} unconfirmed, ${floating.errors.length} failed reads`);
        floating.assertNone();
      },
    };
  } catch (err) {
    await floating.stop();
    await zk?.close().catch(() => undefined);
    await keepLogs(cluster).catch(() => undefined);
    await cluster.destroy().catch(() => undefined);
    throw err;
  }
}

/** Defines guests on the victim and starts them (`pvc vm define --target`, `pvc vm start`); waits until virsh shows them all running there. */
export async function placeGuests(fc: FailoverCluster, memories: readonly number[], opts: PlaceOptions = {}): Promise<Guest[]> {
  return placeGuestsOn(fc, fc.victim, memories, opts);
}

/** RBD-backed guests ({@link PlaceOptions.rbd}): each boots from nothing but writes a marker on its own image. */
export interface RbdGuestOptions {
  /** The text each guest writes at offset 0 of its disk once booted (`pvc.marker=write:<text>`); the guest's name is appended. */
  marker: string;
  /** Image size, MiB (default 64). */
  sizeMiB?: number;
}

/** Options of {@link placeGuestsOn}. */
export interface PlaceOptions {
  /** Number of the first guest (names `fvm<n>`). Default 1. */
  first?: number;
  /**
   * Give each guest a raw disk on its own new image `<pool>/<name>` of the cluster's Ceph (created
   * with `rbd create` on `host`; the cluster needs `ceph: true`); `pvc vm define` keeps it in `rbdlist`.
   */
  rbd?: RbdGuestOptions;
}

/** The marker a guest of {@link placeGuestsOn} with `rbd` writes. */
export const rbdMarker = (o: RbdGuestOptions, g: Guest): string => `${o.marker}-${g.name}`;

async function guestXml(fc: FailoverCluster, host: ClusterHost, g: Guest, rbd: RbdGuestOptions | undefined): Promise<string> {
  const base = { uuid: g.uuid, memoryMiB: g.memoryMiB };
  if (!rbd) return fc.cluster.guest.domainXml(g.name, base);
  const ceph = fc.cluster.ceph;
  if (!ceph) throw new Error(`guest ${g.name}: an RBD disk needs a cluster with ceph: true`);
  const made = await host.exec('rbd', ['create', '--size', String(rbd.sizeMiB ?? 64), `${ceph.pool}/${g.name}`]);
  if (made.exitCode !== 0) throw new Error(`rbd create ${ceph.pool}/${g.name} on ${host.name}: ${made.stderr.trim()}`);
  return fc.cluster.guest.domainXml(g.name, {
    ...base, disks: [{ pool: ceph.pool, image: g.name }], cmdline: `pvc.disk=/dev/vda pvc.marker=write:${rbdMarker(rbd, g)}`,
  });
}

/** {@link placeGuests} on `host`, numbering the guests from `opts.first` (names `fvm<n>`); with `opts.rbd` each has an RBD disk. */
export async function placeGuestsOn(fc: FailoverCluster, host: ClusterHost, memories: readonly number[], opts: PlaceOptions | number = {}): Promise<Guest[]> {
  const o = typeof opts === 'number' ? { first: opts } : opts;
  const first = o.first ?? 1;
  const guests = memories.map((memoryMiB, i) => ({ name: `fvm${first + i}`, uuid: uuidOf(first + i), memoryMiB }));
  for (const g of guests) {
    await fc.cli.define(await guestXml(fc, host, g, o.rbd), host.name);
    await fc.cli.ok('vm', 'start', g.name);
  }
  await waitFor(`${guests.length} guest(s) running on ${host.name}`, 120_000, async () => {
    const r = await host.virsh(['list', '--uuid']);
    const up = new Set(r.stdout.split('\n').map((l) => l.trim()));
    const missing = guests.filter((g) => !up.has(g.uuid));
    if (missing.length === 0) return true;
    throw new Error(`not running yet: ${missing.map((g) => g.name).join(' ')}`);
  }, 250);
  return guests;
}

/** What the failover looked like; times are epoch ms of this machine (every process shares its clock). */
export interface FailoverTimeline {
  windowMs: number;
  /** When the victim's cluster link was down (its `ip link set … down` had returned). */
  failureAt: number;
  /** How long that cut took from being asked (a process spawn; not part of the failover). */
  cutMs: number;
  poweredOffAt: number;
  /** From keepaliled's log line when there is one, else the observer's ZK watch. */
  deadAt?: number;
  fencedAt?: number;
  /** When the observer's ZK watch saw `dead` / `fenced`. */
  deadWatchAt?: number;
  fencedWatchAt?: number;
  flushedAt?: number;
  /** Per guest: when its `node` key left the victim, and where it went. */
  moved: Map<string, { at: number; target: string }>;
  /**
   * Per guest: when it first ran on another host — libvirt's `Started` event there (a `virsh event`
   * stream per host, stamped on arrival), or the first virsh sighting if that came first. A
   * `virsh list` waits while other domains are being started (libvirt locks each domain it lists),
   * so during a burst of starts the sighting alone came up to ~1 s late.
   */
  runningElsewhere: Map<string, { at: number; host: string }>;
  /** Per guest: first console heartbeat of the new instance. */
  firstTick: Map<string, number>;
  events: LogEvent[];
  quorumAtFence: boolean;
  quorumDetail: string;
}

/** `node-dead` lines about any node but the victim: a healthy node declared dead. */
export function falseDeaths(events: readonly LogEvent[], victim: string): LogEvent[] {
  return events.filter((e) => e.msg === 'node-dead' && !e.detail.includes(`node=${victim}`));
}

/** The phases of a timeline, ms (undefined when a step never happened). */
export function phases(t: FailoverTimeline): Record<'detect' | 'fence' | 'move' | 'restart' | 'total' | 'firstTick', number | undefined> {
  const lastOf = (xs: readonly number[]): number | undefined => (xs.length === 0 ? undefined : Math.max(...xs));
  const running = lastOf([...t.runningElsewhere.values()].map((v) => v.at));
  const moved = lastOf([...t.moved.values()].map((v) => v.at));
  const d = (a?: number, b?: number): number | undefined => (a !== undefined && b !== undefined ? b - a : undefined);
  return {
    detect: d(t.failureAt, t.deadAt),
    fence: d(t.deadAt, t.fencedAt),
    move: d(t.fencedAt, moved),
    restart: d(t.fencedAt, running),
    total: d(t.failureAt, running),
    firstTick: d(t.failureAt, lastOf([...t.firstTick.values()])),
  };
}

/**
 * Cuts the victim's network, powers it off through its BMC, and records the timeline until every
 * guest runs elsewhere and printed a heartbeat (or `timeoutMs` passes: then the timeline has gaps).
 */
export async function failVictim(fc: FailoverCluster, guests: readonly Guest[], timeoutMs = 120_000): Promise<FailoverTimeline> {
  const { zk, victim, settings } = fc;
  const moved = new Map<string, { at: number; target: string }>();
  const t: FailoverTimeline = {
    windowMs: settings.keepaliveInterval * settings.fenceIntervals * 1000, failureAt: 0, cutMs: 0, poweredOffAt: 0, moved,
    runningElsewhere: new Map(), firstTick: new Map(), events: [], quorumAtFence: false, quorumDetail: '',
  };
  const k = paths.node(victim.name);
  const unwatch = [
    zk.watchData(k.daemonState, (v) => {
      if (v?.data === 'dead' && t.failureAt && t.deadAt === undefined) t.deadAt = realClock.now();
      if (v?.data === 'fenced' && t.failureAt && t.fencedAt === undefined) t.fencedAt = realClock.now();
    }),
    zk.watchData(k.domainState, (v) => {
      if (v?.data === 'flushed' && t.failureAt && t.flushedAt === undefined) t.flushedAt = realClock.now();
    }),
    ...guests.map((g) => zk.watchData(paths.domain(g.uuid).node, (v) => {
      if (t.failureAt && v && v.data !== victim.name && !moved.has(g.name)) moved.set(g.name, { at: realClock.now(), target: v.data });
    })),
  ];
  // The hosts' libvirtd run in their own mount namespaces: virsh through the host wrapper, local socket.
  const streams = fc.others.map((h) => ({
    host: h.name, events: lifecycleEvents('qemu:///system', { prefix: ['bash', HOST_POWER_SH, h.dirs.root, 'exec'], now: () => realClock.now() }),
  }));
  try {
    // The failure is the cluster link going down (ZK and keepalives cross it): stamped when that
    // cut has returned, not when it was asked for; spawning `ip` took 29–177 ms in the runs of
    // 2026-11-27, which the figures counted as detection before (see cutMs).
    const cutAskedAt = realClock.now();
    await victim.cutNetwork(['cluster']);
    t.failureAt = realClock.now();
    t.cutMs = t.failureAt - cutAskedAt;
    await victim.cutNetwork(['storage', 'upstream']);
    const off = await ipmitool(rootExec, victim.ipmi, ['chassis', 'power', 'off']);
    if (off.exitCode !== 0) throw new Error(`ipmitool power off ${victim.name}: ${off.stderr.trim()}`);
    t.poweredOffAt = realClock.now();
    const offsets = consoleOffsets(fc.cluster, guests);
    let polls = 0;
    await waitFor('every guest running elsewhere with a new heartbeat', timeoutMs, async () => {
      // A healthy node declared dead (and fenced) breaks the scenario: stop waiting, report it.
      if (++polls % 10 === 0 && falseDeaths(keepaliledEvents(fc.others, t.failureAt), victim.name).length > 0) return true;
      for (const g of guests) {
        if (!t.runningElsewhere.has(g.name)) {
          const host = fc.others.find((h) => fc.watch.firstSeen.has(`${g.uuid}@${h.name}`));
          const seen = host && { at: fc.watch.firstSeen.get(`${g.uuid}@${host.name}`)!, host: host.name };
          const ev = streams.find((x) => x.events.started.has(g.name));
          const started = ev && { at: ev.events.started.get(g.name)!, host: ev.host };
          const first = seen && started ? (started.at <= seen.at ? started : seen) : (seen ?? started);
          if (first) t.runningElsewhere.set(g.name, first);
        }
        if (!t.firstTick.has(g.name)) {
          const at = firstTickAfter(fc.cluster, g, offsets.get(g.name) ?? 0);
          if (at !== undefined) t.firstTick.set(g.name, at);
        }
      }
      return t.runningElsewhere.size === guests.length && t.firstTick.size === guests.length ? true : undefined;
    }, 100).catch(() => undefined);
  } finally {
    for (const u of unwatch) u();
    for (const x of streams) x.events.close();
  }
  t.events = keepaliledEvents(fc.others, t.failureAt);
  // The keepaliled lines are written when it happened; the observer's watch sees it a little later.
  const logged = (msg: string, extra = ''): number | undefined =>
    t.events.find((e) => e.msg === msg && e.detail.includes(`node=${victim.name}`) && e.detail.includes(extra))?.at;
  t.deadWatchAt = t.deadAt;
  t.fencedWatchAt = t.fencedAt;
  t.deadAt = logged('node-dead') ?? t.deadAt;
  t.fencedAt = logged('fence-result', 'outcome=success') ?? t.fencedAt;
  const q = fc.quorum.between(t.deadAt ?? t.failureAt, t.fencedAt ?? realClock.now());
  t.quorumAtFence = q.length > 0 && q.every((s) => s.quorum);
  t.quorumDetail = q.map((s) => `${new Date(s.at).toISOString().slice(17, 23)} ${s.quorum ? 'quorum' : 'NO QUORUM'} (${s.modes})`).join('; ');
  return t;
}
