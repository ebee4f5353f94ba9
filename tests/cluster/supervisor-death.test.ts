/**
 * The supervisor SIGKILLed on a host of the real cluster (issue 14 item 7, behaviour of item 4): the
 * node services on 3 harness hosts (keepalive 2 s × 8 = a 16 s detection window, successful_fence
 * migrate); hv3 is made the primary and runs guest fvm1.
 *
 * 1. `kill -9` of hv3's supervisor and a new one started at once (the harness's service, as an
 *    operator or systemd would): the old children (netd, vmd, cephd, keepaliled — spawned with an
 *    IPC channel and PVC_SUPERVISED=1) stop by themselves within SUPERVISOR_GONE_EXIT_MS + 2 s; the
 *    new supervisor starts all four once (ListServices: running, 0 restarts; no "cannot start the
 *    local gRPC server", no crash loop); hv3 is `run` again, written by the new generation, and was
 *    never declared dead (the gap stayed inside the window); fvm1 kept running as the same domain.
 * 2. `kill -9` of the supervisor with none started: the children stop and no node-service process
 *    is left on hv3 (nothing runs unsupervised), fvm1 keeps running; hv3's keepalives stop, so after
 *    the window it is declared dead, fenced through its BMC, and fvm1 is recovered onto hv1/hv2
 *    (docs/keepaliled.md, "Liveness and fencing"). The fence power-cycled hv3: its supervisor starts
 *    at boot, hv3 returns to `run` (domainstate `flushed`), fvm1 is not started again;
 *    `pvc node ready hv3` brings fvm1 back.
 * Throughout: no VM runs on two hosts (DoubleRunWatch, every libvirtd every 200 ms).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { rpcClient, socketPath, SUPERVISED_ENV, SUPERVISOR, SUPERVISOR_GONE_EXIT_MS, unixTarget, type ChildServiceInfo } from '@pvc/rpc';
import { realClock } from '@pvc/runtime';
import { paths } from '@pvc/zk';
import { missingPrerequisites, type ClusterHost } from './harness/index.js';
import { placeGuests, startFailoverCluster, type FailoverCluster, type Guest } from './failover-scenario.js';
import { keepaliledEvents } from './failover-logs.js';
import { pvcDirs, staleBuilds } from './pvc-node.js';
import { domId, KeyHistory, nodeServiceProcs, processGone, runningHosts, serviceLog, waitRunsOn, type NodeProc } from './scenario-probes.js';
import { waitUntil } from '../support/wait.js';

/**
 * A 16 s window: on this 2-core machine under load, kill → new supervisor → first keepalive of the
 * new keepaliled took up to 8.7 s (measured), and part 1 must stay inside the window.
 */
const SETTINGS = { keepaliveInterval: 2, fenceIntervals: 8, successfulFence: 'migrate' as const };
const WINDOW_MS = SETTINGS.keepaliveInterval * SETTINGS.fenceIntervals * 1000;
/** The children's own hard bound (a graceful stop that hangs exits after it), plus scheduling slack. */
const CHILD_EXIT_BOUND_MS = SUPERVISOR_GONE_EXIT_MS + 2_000;
const CHILDREN = ['netd', 'vmd', 'cephd', 'keepaliled'] as const;
const log = (l: string): void => console.log(`  [supervisor-death] ${l}`);

async function listServices(h: ClusterHost): Promise<Record<string, ChildServiceInfo>> {
  const sv = rpcClient(unixTarget(socketPath(pvcDirs(h).run, 'supervisor')), SUPERVISOR);
  try {
    return Object.fromEntries((await sv.listServices({}, { deadlineMs: 2_000 })).services.map((s) => [s.name, s]));
  } finally {
    sv.close();
  }
}

/** The supervisor and its four children on `h`, one each (vmd's `virsh event` may be there too). */
async function generation(h: ClusterHost): Promise<NodeProc[]> {
  return waitUntil(() => nodeServiceProcs(h), {
    what: `supervisor + ${CHILDREN.join(', ')} running on ${h.name}`, timeoutMs: 60_000, intervalMs: 250,
    until: (ps) => ['supervisor', ...CHILDREN].every((s) => ps.filter((p) => p.service === s).length === 1),
  });
}

/** The supervisor's environment marks nothing; each child's carries PVC_SUPERVISED=1 (read from /proc). */
function supervisedFlag(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`${SUPERVISED_ENV}=1`);
  } catch {
    return false;
  }
}

/** Waits until every process of `old` has exited; returns ms from `t0` to each exit seen. */
async function waitAllGone(old: readonly NodeProc[], t0: number, what: string): Promise<Record<string, number>> {
  const exitMs: Record<string, number> = {};
  await waitUntil(() => {
    for (const p of old) if (exitMs[`${p.service}#${p.pid}`] === undefined && processGone(p.pid)) exitMs[`${p.service}#${p.pid}`] = realClock.now() - t0;
    return Object.keys(exitMs).length === old.length;
  }, { what, timeoutMs: CHILD_EXIT_BOUND_MS, intervalMs: 20 });
  return exitMs;
}

/** Largest gap (ms) between two keepalive changes seen since `since`, and up to now. */
function keepaliveGap(k: KeyHistory, since: number): number {
  const at = k.values.filter((v) => v.at >= since).map((v) => v.at);
  return Math.max(0, ...[since, ...at, realClock.now()].map((t, i, a) => (i === 0 ? 0 : t - a[i - 1]!)));
}

describe('supervisor SIGKILLed on a host of the real cluster [root only]', () => {
  let fc: FailoverCluster | undefined;
  let hv3: ClusterHost;
  let guest: Guest;
  let daemon: KeyHistory | undefined;
  let keepalive: KeyHistory | undefined;

  before(async () => {
    const missing = missingPrerequisites();
    assert.deepEqual(missing, [], `prerequisites missing:\n${missing.join('\n')}`);
    const stale = staleBuilds();
    if (stale.length > 0) log(`warning: dist older than src in ${stale.join(', ')} (the services run from dist)`);
    fc = await startFailoverCluster('svdie', SETTINGS, log);
    hv3 = fc.victim;
    daemon = new KeyHistory(fc.zk, paths.node(hv3.name).daemonState);
    keepalive = new KeyHistory(fc.zk, paths.node(hv3.name).keepalive);
  });

  after(async () => {
    daemon?.stop();
    keepalive?.stop();
    await fc?.close();
  });

  it('hv3 is the primary, runs fvm1, and its five node processes; each child carries PVC_SUPERVISED=1', async () => {
    await fc!.cli.ok('node', 'primary', 'hv3', '--wait', '--wait-timeout', '60');
    guest = (await placeGuests(fc!, [96]))[0]!;
    const procs = await generation(hv3);
    for (const p of procs.filter((x) => x.service !== 'virsh-event')) {
      assert.equal(supervisedFlag(p.pid), p.service !== 'supervisor', `${p.service} (pid ${p.pid}) PVC_SUPERVISED`);
    }
  });

  it('kill -9 + a new supervisor at once: old children gone within the bound, all four up once, hv3 run again and never dead, fvm1 untouched', async () => {
    const f = fc!;
    const old = await generation(hv3);
    const sup = old.find((p) => p.service === 'supervisor')!;
    const children = old.filter((p) => p.service !== 'supervisor');
    const domid0 = await domId(hv3, guest.uuid);
    const t0 = realClock.now();
    process.kill(sup.pid, 'SIGKILL');
    // Timed from the kill, while the new supervisor is being started.
    const exits = waitAllGone(children, t0, 'every child of the SIGKILLed supervisor to exit');
    exits.catch(() => undefined);
    await waitUntil(() => processGone(sup.pid), { what: `supervisor pid ${sup.pid} gone after SIGKILL`, timeoutMs: 5_000, intervalMs: 20 });
    await hv3.restartService('pvc');
    const restartAt = realClock.now();
    const exitMs = await exits;
    log(`old children exited after ${Object.entries(exitMs).map(([k, v]) => `${k} ${v} ms`).join(', ')} (bound ${CHILD_EXIT_BOUND_MS} ms); new supervisor started ${restartAt - t0} ms after the kill`);

    const services = await waitUntil(() => listServices(hv3), {
      what: 'ListServices of the new supervisor: all four running', timeoutMs: 60_000, intervalMs: 250,
      until: (s) => CHILDREN.every((c) => s[c]?.state === 'running'),
    });
    for (const c of CHILDREN) assert.equal(services[c]?.restarts, 0, `${c} restarted: ${JSON.stringify(services[c])}`);
    const now = await generation(hv3);
    assert.ok(now.every((p) => !old.some((o) => o.pid === p.pid && p.service !== 'virsh-event')), 'a new generation of processes');

    const st = await waitUntil(() => f.zk.get(paths.node(hv3.name).daemonState), {
      what: 'hv3 daemonstate run written after the restart', timeoutMs: 60_000, intervalMs: 200, until: (s) => s.data === 'run' && s.stat.mtime >= restartAt,
    });
    log(`hv3 run again ${st.stat.mtime - t0} ms after the kill; daemonstate values since: ${daemon!.since(t0).join(' → ')}`);
    const gap = keepaliveGap(keepalive!, t0 - SETTINGS.keepaliveInterval * 1000);
    log(`largest keepalive gap around the restart: ${gap} ms (window ${WINDOW_MS} ms)`);
    assert.ok(!daemon!.since(t0).some((v) => v === 'dead' || v === 'fenced'), `hv3 declared dead: ${daemon!.since(t0).join(' → ')}`);
    assert.deepEqual(keepaliledEvents(f.cluster.hosts, t0).filter((e) => e.msg === 'node-dead').map((e) => e.detail), []);

    const problems = ['supervisor', ...CHILDREN].flatMap((s) => serviceLog(hv3, s, restartAt)
      .filter((l) => l.msg === 'cannot start the local gRPC server' || /crash-looping/.test(String(l.msg)) || /still held .* after/.test(String(l.msg)))
      .map((l) => `${s}: ${String(l.msg)}`));
    assert.deepEqual(problems, []);
    const waited = serviceLog(hv3, 'supervisor', restartAt).find((l) => l.msg === 'sockets of the previous generation released');
    if (waited) log(`the new supervisor waited ${String(waited.waitedMs)} ms for the old children's sockets`);

    // The new vmd has reported fvm1 (a keepalive after the restart lists it): the same domain, not started again.
    await waitUntil(() => f.zk.get(paths.node(hv3.name).runningDomains), {
      what: 'a keepalive of the new generation listing fvm1', timeoutMs: 30_000, intervalMs: 200,
      until: (s) => s.stat.mtime > st.stat.mtime && s.data.split(/\s+/).includes(guest.uuid),
    });
    assert.equal(await domId(hv3, guest.uuid), domid0, 'fvm1 is the same domain');
    assert.deepEqual(await runningHosts(f.cluster.hosts, guest.uuid), ['hv3']);
    const primary = await waitUntil(() => f.zk.read(paths.config.primaryNode), { what: 'a primary again', until: (p) => !!p && p !== 'none', timeoutMs: 30_000, intervalMs: 200 });
    log(`primary after the restart: ${primary}`);
  });

  let killedAt = 0;
  let lastKeepaliveAt = 0;

  it('kill -9, none started: the children stop and no node-service process is left; fvm1 still runs; after the window hv3 is declared dead and fenced', async () => {
    const f = fc!;
    const old = await generation(hv3);
    const sup = old.find((p) => p.service === 'supervisor')!;
    killedAt = realClock.now();
    process.kill(sup.pid, 'SIGKILL');
    const exitMs = await waitAllGone(old, killedAt, 'the supervisor and every child to exit');
    log(`exited after ${Object.entries(exitMs).map(([k, v]) => `${k} ${v} ms`).join(', ')}`);
    assert.deepEqual((await nodeServiceProcs(hv3)).map((p) => `${p.pid} ${p.cmd}`), [], 'node-service processes left on hv3');
    assert.deepEqual(await runningHosts(f.cluster.hosts, guest.uuid), ['hv3'], 'fvm1 keeps running (vmd stops without touching VMs)');

    const deadAt = await waitUntil(() => daemon!.firstAt('dead', killedAt), { what: 'hv3 declared dead', timeoutMs: WINDOW_MS + 30_000, intervalMs: 100 });
    const fencedAt = await waitUntil(() => daemon!.firstAt('fenced', killedAt), { what: 'hv3 fenced', timeoutMs: 60_000, intervalMs: 100 });
    lastKeepaliveAt = keepalive!.values.filter((v) => v.at <= deadAt!).at(-1)?.at ?? killedAt;
    log(`keepalive last seen +${lastKeepaliveAt - killedAt} ms, dead +${deadAt! - killedAt} ms (${deadAt! - lastKeepaliveAt} ms after it), fenced +${fencedAt! - killedAt} ms`);
    assert.ok(deadAt! - lastKeepaliveAt >= WINDOW_MS - 1_000, `declared dead ${deadAt! - lastKeepaliveAt} ms after the last keepalive, before the ${WINDOW_MS} ms window`);
    const fence = await waitUntil(() => keepaliledEvents(f.others, killedAt).find((e) => e.msg === 'fence-result' && e.detail.includes('node=hv3')), {
      what: 'a fence-result line for hv3', timeoutMs: 10_000, intervalMs: 200,
    });
    assert.match(fence!.detail, /outcome=success/);
  });

  it('fvm1 recovered onto hv1/hv2 (virsh); hv3 power-cycled by the fence boots its supervisor and returns to run; fvm1 not started again; node ready brings it back', async () => {
    const f = fc!;
    const on = await waitUntil(() => runningHosts(f.cluster.hosts, guest.uuid), {
      what: 'fvm1 running on hv1 or hv2 only', timeoutMs: 60_000, intervalMs: 250, until: (hs) => hs.length === 1 && hs[0] !== 'hv3',
    });
    const target = f.cluster.host(on[0]!);
    const keys = paths.domain(guest.uuid);
    assert.deepEqual([await f.zk.read(keys.state), await f.zk.read(keys.node), await f.zk.read(keys.lastNode)], ['start', target.name, 'hv3']);
    const domid1 = await domId(target, guest.uuid);

    const back = await waitUntil(() => f.zk.get(paths.node(hv3.name).daemonState), {
      what: 'hv3 run again after the fence', timeoutMs: 180_000, intervalMs: 250, until: (s) => s.data === 'run' && s.stat.mtime > killedAt,
    });
    log(`hv3 back to run +${back.stat.mtime - killedAt} ms after the kill; daemonstate: ${daemon!.since(killedAt).join(' → ')}`);
    await generation(hv3);
    assert.equal(await waitUntil(() => f.zk.read(paths.node(hv3.name).domainState), { what: 'hv3 flushed', until: (v) => v === 'flushed', timeoutMs: 30_000, intervalMs: 200 }), 'flushed');
    // hv3's new vmd has run (a keepalive with its figures after run): fvm1 was not started there, nor again on its new host.
    await waitUntil(() => f.zk.get(paths.node(hv3.name).runningDomains), {
      what: 'a keepalive of hv3 after its return', timeoutMs: 30_000, intervalMs: 200, until: (s) => s.stat.mtime > back.stat.mtime,
    });
    assert.deepEqual(await runningHosts(f.cluster.hosts, guest.uuid), [target.name]);
    assert.equal(await domId(target, guest.uuid), domid1, 'fvm1 is the same domain on its new host');
    const faults = JSON.parse(await f.cli.ok('cluster', 'fault', 'list', '-f', 'json')) as { id: string }[];
    assert.ok(faults.some((x) => x.id === 'DEAD_NODE_HV3'), `DEAD_NODE_HV3 stored: ${faults.map((x) => x.id).join(', ')}`);

    await f.cli.ok('node', 'ready', 'hv3', '--wait', '--wait-timeout', '120');
    await waitRunsOn(f, guest.uuid, ['hv3'], 'fvm1 back on hv3');
  });

  it('no VM ever ran on two hosts (every libvirtd polled every 200 ms, state running)', async () => {
    await fc!.watch.stop();
    log(`DoubleRunWatch: ${fc!.watch.polls} polls, ${fc!.watch.unconfirmed.length} unconfirmed, ${fc!.watch.activeOnTwo.length} active on two (migrations)`);
    assert.ok(fc!.watch.polls > 20, 'the invariant was actually polled');
    assert.deepEqual(fc!.watch.violations, []);
  });
});
