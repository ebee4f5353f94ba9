/**
 * The suicide peer check on the real cluster (issue 14 item 5; its cluster test, item 7): the node
 * services on 3 harness hosts, all coordinators, with suicide on (settings below; the peer check on
 * its default port 7374; successful_fence migrate). The suicide command appends a line to a marker
 * file and resets the host through its own BMC. Guest fvm1 runs on hv3.
 *
 * 1. Global outage: the Zookeeper server of every coordinator is killed for 20 s. Each keepaliled
 *    reaches its suicide deadline, asks the others over the cluster network, learns that all three
 *    cannot reach Zookeeper and holds its reset, saying so once (`suicide-watch` → `held`, "global
 *    Zookeeper outage, not resetting: 3 of 3 …"). No suicide command runs (no marker), no BMC gets a
 *    power request (`set`; the IPMI health plugin's `get power` goes on), no host changes power;
 *    fvm1 runs on as the same domain and its console counter never restarts. Zookeeper back (hv1 and hv2 first, so that hv3 does not lead): every node writes
 *    keepalives again (→ `watching`) and stays `run`; nobody is declared dead.
 * 2. Isolated node: hv3's cluster, storage and upstream links are cut (its BMC network stays up).
 *    At its deadline nobody answers its ask — not global — so it stops fvm1 and resets itself
 *    through its BMC, before the others' detection window ends; hv1/hv2 declare it dead, fence it
 *    and start fvm1 on one of them. hv3's network restored: it returns to `run`, fvm1 is not started
 *    again.
 * Throughout: no VM runs on two hosts (DoubleRunWatch, every libvirtd every 200 ms).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { realClock } from '@pvc/runtime';
import { paths } from '@pvc/zk';
import { peerAskBoundMs, suicideStepMs } from '../../apps/keepaliled/src/fence/rules.js';
import { missingPrerequisites } from './harness/index.js';
import { falseDeaths, placeGuests, startFailoverCluster, victimNotLeader, type FailoverCluster, type Guest } from './failover-scenario.js';
import { keepaliledEvents } from './failover-logs.js';
import { victimReturns } from './failover-report.js';
import { staleBuilds, waitNodesRun } from './pvc-node.js';
import { domId, runningHosts } from './scenario-probes.js';
import { bmcSets, bootsAfter, logLines, powerLogs, sizeOf, suicideMarks, textAfter, ticksAfter, watchChanges } from './suicide-probes.js';
import { waitUntil } from '../support/wait.js';

/**
 * keepalive 1 s (a short test), fence_intervals 6 (the sample config's), suicide_intervals 3. The
 * suicide must come before the fence: an isolated node resets itself at most deadline + one watch
 * step + one ask (5 s) after its last keepalive, plus the VM stop, inside the others' 6 s window;
 * with suicide ≥ fence the fencer's power-off would get there first and the suicide would fire only
 * in the node's next life. Not 2: a keepalive delayed by a Zookeeper leader change or by this busy
 * 2-core machine would come close to the deadline, and a deadline reached while the others still
 * reach Zookeeper resets a healthy node.
 */
const SETTINGS = { keepaliveInterval: 1, fenceIntervals: 6, suicideIntervals: 3, successfulFence: 'migrate' as const };
const INTERVAL_MS = SETTINGS.keepaliveInterval * 1000;
const SUICIDE_MS = SETTINGS.suicideIntervals * INTERVAL_MS;
const WINDOW_MS = SETTINGS.fenceIntervals * INTERVAL_MS;
/** Scheduling on this busy 2-core machine. */
const SLACK_MS = 2_000;
/** From the moment a node could last write to its decision (hold or reset): deadline, one watch step, one ask (fence/rules.ts). */
const DECISION_BOUND_MS = SUICIDE_MS + suicideStepMs(INTERVAL_MS) + peerAskBoundMs(INTERVAL_MS) + SLACK_MS;
/** The suicide stops the VMs through vmd (StopAll, 5 s deadline) before its command runs. */
const VM_STOP_MS = 5_000;
/** Issue 14: 20 s without Zookeeper reset every node. Well past the suicide window, the ask, a fresh window and the ZK session timeout (10 s). */
const OUTAGE_MS = 20_000;
/** Failover target (issue 3): the guest runs elsewhere within the detection window + 5 s; +5 s more for the BMC busy with the node's own reset. */
const RECOVERY_BOUND_MS = WINDOW_MS + 10_000;
const log = (l: string): void => console.log(`  [suicide-peer-check] ${l}`);
const rel = (at: number | undefined, from: number): string => (at === undefined ? 'never' : `+${((at - from) / 1000).toFixed(2)} s`);

describe('the suicide peer check on the real cluster [root only]', () => {
  let fc: FailoverCluster | undefined;
  let guest: Guest;
  /** The global outage: when the kill began and ended, and what was there before it. */
  const outage = { t0: 0, killedAt: 0, domid: '', consoleAt: 0, logsAt: new Map<string, { chassis: number; power: number }>() };
  /** The isolated node: when it was cut, its logs' sizes before, and its own reset request. */
  const cut = { at: 0, consoleAt: 0, chassisAt: 0, resetAt: 0 };

  before(async () => {
    const missing = missingPrerequisites();
    assert.deepEqual(missing, [], `prerequisites missing:\n${missing.join('\n')}`);
    const stale = staleBuilds();
    if (stale.length > 0) log(`warning: dist older than src in ${stale.join(', ')} (the services run from dist)`);
    fc = await startFailoverCluster('spchk', SETTINGS, log);
  });

  after(async () => {
    await fc?.close();
  });

  it('every coordinator serves the peer check on its cluster address; fvm1 runs on hv3', async () => {
    const f = fc!;
    for (const h of f.cluster.hosts) {
      const serving = await waitUntil(() => logLines(h, 'serving the suicide peer check', 0)[0], { what: `${h.name}'s keepaliled serving the peer check`, timeoutMs: 30_000, intervalMs: 200 });
      log(`${h.name}: serving the suicide peer check on ${String(serving!.address)}`);
      assert.ok(String(serving!.address).includes(h.clusterIp) && String(serving!.address).includes('7374'), `${h.name} listens on its cluster address, port 7374`);
    }
    guest = (await placeGuests(f, [96]))[0]!;
    // Booted: the console offsets taken below follow its `up` line.
    await waitUntil(() => ticksAfter(f.cluster, guest.name, 0).length, { what: 'fvm1\'s first heartbeat', timeoutMs: 30_000, intervalMs: 200 });
  });

  it('Zookeeper killed on every coordinator: each node holds its reset within the bound, saying that 3 of 3 are cut off', async () => {
    const f = fc!;
    const hosts = f.cluster.hosts;
    outage.domid = await domId(f.victim, guest.uuid);
    outage.consoleAt = sizeOf(f.cluster.guest.consoleLog(guest.name));
    for (const h of hosts) outage.logsAt.set(h.name, { chassis: sizeOf(powerLogs(h).chassis), power: sizeOf(powerLogs(h).power) });
    outage.t0 = realClock.now();
    await Promise.all(hosts.map((h) => h.killService('zookeeper')));
    outage.killedAt = realClock.now();
    log(`Zookeeper killed on ${hosts.map((h) => h.name).join(', ')} (${outage.killedAt - outage.t0} ms)`);
    const held = await waitUntil(() => hosts.map((h) => watchChanges(h, outage.t0).find((c) => c.to === 'held')), {
      what: 'a held suicide-watch line from every keepaliled', until: (cs) => cs.every(Boolean), timeoutMs: DECISION_BOUND_MS, intervalMs: 100,
    });
    for (const c of held) log(`${c!.host}: held ${c!.at - outage.t0} ms after the kill began (bound ${DECISION_BOUND_MS} ms): ${c!.reason}`);
    for (const c of held) {
      assert.match(c!.reason, /^global Zookeeper outage, not resetting: 3 of 3 coordinators cannot reach Zookeeper \(2 needed\): hv1( \(self\))? cut off .*, hv2( \(self\))? cut off .*, hv3( \(self\))? cut off /);
    }
  });

  it('held for the whole 20 s outage: one state change per node, no suicide command, no power request to any BMC, fvm1 the same domain and printing', async () => {
    const f = fc!;
    // The outage itself: its length is the scenario, not a wait for a result.
    await realClock.sleep(Math.max(0, outage.killedAt + OUTAGE_MS - realClock.now()));
    const changes = f.cluster.hosts.flatMap((h) => watchChanges(h, outage.t0).map((c) => `${c.host} ${c.from}→${c.to}`));
    assert.deepEqual(changes, f.cluster.hosts.map((h) => `${h.name} watching→held`), 'one change per node during the outage: held');
    assertNoReset(f);
    assert.equal(await domId(f.victim, guest.uuid), outage.domid, 'fvm1 is the same domain');
    const ticks = ticksAfter(f.cluster, guest.name, outage.consoleAt);
    log(`after ${OUTAGE_MS / 1000} s without Zookeeper: fvm1 ticks ${ticks[0] ?? '?'} … ${ticks.at(-1) ?? '?'} (${ticks.length} lines), no reset`);
    assert.ok(ticks.length >= OUTAGE_MS / 1000 - 5, `fvm1 kept printing (${ticks.length} ticks)`);
  });

  it('Zookeeper back (hv1 and hv2 first): every node writes keepalives again, is run, its watch back to watching; nobody declared dead; fvm1 never rebooted', async () => {
    const f = fc!;
    const hosts = f.cluster.hosts;
    const backAt = realClock.now();
    await Promise.all(hosts.slice(0, 2).map((h) => h.restartService('zookeeper')));
    await f.cluster.zk.waitForQuorum(60_000);
    const quorumAt = realClock.now();
    await f.victim.restartService('zookeeper');
    await f.cluster.zk.waitForAllServing(60_000);
    const keepalives = await waitUntil(async () => Promise.all(hosts.map(async (h) => (await f.zk.get(paths.node(h.name).keepalive)).stat.mtime)), {
      what: 'a keepalive of every node after Zookeeper came back', until: (ms) => ms.every((m) => m > backAt), timeoutMs: 60_000, intervalMs: 200,
    });
    const watching = await waitUntil(() => hosts.map((h) => watchChanges(h, backAt).find((c) => c.to === 'watching')), {
      what: 'every suicide watch back to watching', until: (cs) => cs.every(Boolean), timeoutMs: 30_000, intervalMs: 200,
    });
    await waitNodesRun(f.zk, hosts.map((h) => h.name), 30_000);
    log(`Zookeeper restarted: quorum ${rel(quorumAt, backAt)}, keepalives ${hosts.map((h, i) => `${h.name} ${rel(keepalives[i], backAt)}`).join(', ')}`);
    for (const h of hosts) log(`${h.name} suicide watch: ${watchChanges(h, outage.t0).map((c) => `${c.to} ${rel(c.at, outage.t0)}`).join(' → ')} (${watching.find((c) => c?.host === h.name)!.reason})`);
    assertNoReset(f);
    assert.deepEqual(keepaliledEvents(hosts, outage.t0).filter((e) => e.msg === 'node-dead').map((e) => `${e.host}: ${e.detail}`), [], 'nobody declared dead');
    // fvm1 still runs on hv3 as the same domain and prints on, never having rebooted.
    const lastBefore = ticksAfter(f.cluster, guest.name, outage.consoleAt).at(-1) ?? -1;
    await waitUntil(() => ticksAfter(f.cluster, guest.name, outage.consoleAt).at(-1) ?? -1, { what: 'a new fvm1 tick after the outage', until: (t) => t > lastBefore, timeoutMs: 10_000, intervalMs: 200 });
    assert.deepEqual(await runningHosts(hosts, guest.uuid), ['hv3']);
    assert.equal(await domId(f.victim, guest.uuid), outage.domid, 'fvm1 is the same domain');
    const all = ticksAfter(f.cluster, guest.name, outage.consoleAt);
    assert.ok(all.every((t, i) => i === 0 || t > all[i - 1]!), 'fvm1\'s console counter never restarted');
    assert.equal(bootsAfter(f.cluster, guest.name, outage.consoleAt), 0, 'fvm1 never booted again');
  });

  it('hv3 cut off alone (BMC network up): nobody answers its ask, so within the bound it stops fvm1 and asks its own BMC for a reset', async () => {
    const f = fc!;
    const hv3 = f.victim;
    const restarts = await victimNotLeader(f.cluster, hv3);
    log(`Zookeeper: ${(await f.cluster.zk.status()).map((s) => `${s.host}=${s.mode}`).join(' ')}${restarts ? ` (hv3's server restarted ${restarts}×)` : ''}`);
    await waitNodesRun(f.zk, f.cluster.hosts.map((h) => h.name), 30_000);
    cut.consoleAt = sizeOf(f.cluster.guest.consoleLog(guest.name));
    cut.chassisAt = sizeOf(powerLogs(hv3).chassis);
    cut.at = realClock.now();
    await hv3.cutNetwork();

    const fired = await waitUntil(() => watchChanges(hv3, cut.at).find((c) => c.to === 'fired'), { what: 'hv3 deciding to reset', timeoutMs: DECISION_BOUND_MS, intervalMs: 50 });
    const markAt = await waitUntil(() => suicideMarks(hv3)[0], { what: 'hv3\'s suicide command (its marker line)', timeoutMs: VM_STOP_MS + SLACK_MS, intervalMs: 50 });
    const sets = await waitUntil(() => bmcSets(textAfter(powerLogs(hv3).chassis, cut.chassisAt)), { what: 'a request to hv3\'s BMC', until: (r) => r.length > 0, timeoutMs: 5_000, intervalMs: 50 });
    cut.resetAt = sets[0]!.at;
    const suicide = logLines(hv3, 'suicide', cut.at)[0];
    log(`hv3: decided ${rel(fired!.at, cut.at)} (bound ${DECISION_BOUND_MS / 1000} s): ${fired!.reason}`);
    log(`hv3: stopped ${String(suicide?.stopped)} VM(s), silent ${String(suicide?.silentMs)} ms; marker ${rel(markAt, cut.at)}; BMC ${sets[0]!.request} ${rel(cut.resetAt, cut.at)}`);
    assert.match(fired!.reason, /^cut off and the outage is not global: [01] of 3 coordinators cannot reach Zookeeper \(2 needed\): hv1 no answer \(.+\), hv2 no answer \(.+\), hv3 \(self\) /);
    assert.ok(fired!.at - cut.at <= DECISION_BOUND_MS, `decision ${fired!.at - cut.at} ms after the cut`);
    assert.ok(Number(suicide?.silentMs) >= SUICIDE_MS, `reset only after the suicide window: silent ${String(suicide?.silentMs)} ms`);
    assert.equal(suicide?.stopped, 1, 'vmd stopped fvm1 before the reset');
    assert.ok(markAt! - fired!.at <= VM_STOP_MS + SLACK_MS, `suicide command ${markAt! - fired!.at} ms after the decision`);
    assert.equal(sets[0]!.request, 'set reset 1', 'the first request to hv3\'s BMC is its own reset');
  });

  it('hv1/hv2 declare hv3 dead after its reset, fence it and start fvm1 on one of them within the bound', async () => {
    const f = fc!;
    const others = f.others;
    const dead = await waitUntil(() => keepaliledEvents(others, cut.at).find((e) => e.msg === 'node-dead' && e.detail.includes('node=hv3')), { what: 'hv3 declared dead', timeoutMs: WINDOW_MS + 10_000, intervalMs: 100 });
    const fence = await waitUntil(() => keepaliledEvents(others, cut.at).find((e) => e.msg === 'fence-result' && e.detail.includes('node=hv3')), { what: 'hv3 fenced', timeoutMs: 30_000, intervalMs: 100 });
    const on = await waitUntil(() => others.find((h) => f.watch.firstSeen.has(`${guest.uuid}@${h.name}`)), { what: 'fvm1 running on hv1 or hv2', timeoutMs: RECOVERY_BOUND_MS, intervalMs: 100 });
    const runningAt = f.watch.firstSeen.get(`${guest.uuid}@${on!.name}`)!;
    const bootedAt = await waitUntil(() => (bootsAfter(f.cluster, guest.name, cut.consoleAt) > 0 ? realClock.now() : undefined), { what: 'fvm1 booting on its new host', timeoutMs: 30_000, intervalMs: 100 });
    log(`hv3 dead ${rel(dead!.at, cut.at)} (${dead!.host}), fenced ${rel(fence!.at, cut.at)}: ${fence!.detail}`);
    log(`fvm1 running on ${on!.name} ${rel(runningAt, cut.at)} (bound ${RECOVERY_BOUND_MS / 1000} s), booted ${rel(bootedAt, cut.at)}`);
    log(`hv3's BMC: ${bmcSets(textAfter(powerLogs(f.victim).chassis, cut.chassisAt)).map((r) => `${r.request} ${rel(r.at, cut.at)}`).join(', ')}`);
    assert.ok(cut.resetAt < dead!.at, 'hv3 asked for its reset before it was declared dead');
    assert.match(fence!.detail, /outcome=success/);
    assert.ok(runningAt - cut.at <= RECOVERY_BOUND_MS, `fvm1 running elsewhere ${runningAt - cut.at} ms after the cut`);
    assert.deepEqual(falseDeaths(keepaliledEvents(others, cut.at), 'hv3').map((e) => `${e.host}: ${e.detail}`), [], 'a healthy node was declared dead');
    for (const h of others) assert.deepEqual(suicideMarks(h), [], `${h.name}: no suicide`);
    assert.deepEqual(await runningHosts(f.cluster.hosts, guest.uuid), [on!.name]);
  });

  it('hv3 restored: back to run (flushed), fvm1 not started again', async () => {
    const f = fc!;
    const r = await victimReturns(f, [guest]);
    log(`hv3 back to run ${(r.backToRunMs / 1000).toFixed(1)} s after its network was restored; suicide command runs while cut off: ${suicideMarks(f.victim).length}`);
    assert.deepEqual(r.startedAgain, []);
    await waitUntil(() => f.zk.read(paths.node('hv3').domainState), { what: 'hv3 domainstate flushed', until: (v) => v === 'flushed', timeoutMs: 30_000, intervalMs: 200 });
  });

  it('no VM ever ran on two hosts (every libvirtd polled every 200 ms, state running)', async () => {
    await fc!.watch.stop();
    log(`DoubleRunWatch: ${fc!.watch.polls} polls, ${fc!.watch.unconfirmed.length} unconfirmed, ${fc!.watch.activeOnTwo.length} active on two`);
    assert.ok(fc!.watch.polls > 20, 'the invariant was actually polled');
    assert.deepEqual(fc!.watch.violations, []);
  });

  /** Since the outage began: no node decided to reset, ran its suicide command, logged a reset, or had its power changed. */
  function assertNoReset(f: FailoverCluster): void {
    for (const h of f.cluster.hosts) {
      const at = outage.logsAt.get(h.name)!;
      assert.deepEqual(watchChanges(h, outage.t0).filter((c) => c.to === 'fired'), [], `${h.name} never decided to reset`);
      assert.deepEqual(suicideMarks(h), [], `${h.name}: the suicide command never ran`);
      assert.deepEqual(logLines(h, 'resetting this node', outage.t0), [], `${h.name}: no reset logged`);
      // `get power` requests are the IPMI health plugin's; a `set` would be a reset or a power change.
      assert.deepEqual(bmcSets(textAfter(powerLogs(h).chassis, at.chassis)), [], `${h.name}: its BMC got no power request`);
      assert.equal(textAfter(powerLogs(h).power, at.power), '', `${h.name}: no power change`);
    }
  }
});
