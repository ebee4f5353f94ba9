/**
 * Node flush benchmark (issue 4 item 3): on a real 3-host harness cluster running the node
 * services, 10 TCG guests (72–96 MiB, diskless) defined in ZK on hv1. In the same run:
 *
 * 1. one at a time (the original's flush thread): for each guest in turn the bench writes what
 *    that thread writes (`state=migrate`, `node=<target>`, `lastnode=hv1`, targets alternating
 *    hv2/hv3 as the `mem` selector would on equal nodes) and, as that thread does, polls the state
 *    every 0.2 s until it is no longer `migrate` before the next; the same vmd migration machinery
 *    moves it (afterwards, untimed, virsh must show every guest on its target only);
 * 2. `domainstate=unflush` brings them back (not timed);
 * 3. `domainstate=flush`: vmd's bounded-concurrency flush, timed until `flushed`;
 * 4. `unflush` again (timed, for information).
 *
 * Prints both totals and the ratio. Root only; ~5 min.
 *
 *   node --conditions=development --import tsx bench/flush.ts
 */
import { realClock } from '@pvc/runtime';
import { paths } from '@pvc/zk';
import { missingPrerequisites, waitFor } from '../tests/cluster/harness/index.js';
import { startFailoverCluster, type FailoverCluster } from '../tests/cluster/failover-scenario.js';
import { flushAndWait, placeGuests, placement } from '../tests/cluster/flush-scenario.js';
import { runningOn, type MigGuest } from '../tests/cluster/migration-scenario.js';
import { staleBuilds } from '../tests/cluster/pvc-node.js';

const MEMORIES = [72, 80, 88, 96];

async function oneAtATime(fc: FailoverCluster, guests: readonly MigGuest[]): Promise<number> {
  const hv1 = fc.cluster.host('hv1');
  const t0 = realClock.now();
  const targets = guests.map((_, i) => (i % 2 === 0 ? 'hv2' : 'hv3'));
  for (const [i, g] of guests.entries()) {
    const p = paths.domain(g.uuid);
    await fc.zk.write([[p.state, 'migrate'], [p.node, targets[i]!], [p.lastNode, hv1.name]]);
    // As the original's flush thread: poll the state every 0.2 s while it is migrate.
    await waitFor(`${g.name} migrated`, 180_000, async () => ((await fc.zk.read(p.state)) !== 'migrate' ? true : undefined), 200);
  }
  const ms = realClock.now() - t0;
  // Not timed: every guest runs on its target only (virsh), state start.
  for (const [i, g] of guests.entries()) {
    const to = fc.cluster.host(targets[i]!);
    const [st, onTo, onFrom] = await Promise.all([fc.zk.read(paths.domain(g.uuid).state), runningOn(to), runningOn(hv1)]);
    if (st !== 'start' || !onTo.includes(g.uuid) || onFrom.includes(g.uuid)) throw new Error(`${g.name}: state ${st}, on ${to.name} ${onTo.includes(g.uuid)}, on hv1 ${onFrom.includes(g.uuid)}`);
  }
  return ms;
}

async function main(): Promise<void> {
  const missing = missingPrerequisites();
  if (missing.length > 0) throw new Error(`prerequisites missing:\n${missing.join('\n')}`);
  const stale = staleBuilds();
  if (stale.length > 0) console.log(`warning: dist older than src in ${stale.join(', ')} (the services run from dist)`);
  const fc = await startFailoverCluster('flb', { keepaliveInterval: 2, fenceIntervals: 6, successfulFence: 'none' }, (l) => console.log(`   ${l}`));
  try {
    const hv1 = fc.cluster.host('hv1');
    const guests = await placeGuests(fc, hv1, 10, MEMORIES);
    console.log(`10 guests running on hv1`);
    const serialMs = await oneAtATime(fc, guests);
    console.log(`one at a time: ${(serialMs / 1000).toFixed(1)} s; running-on-two samples so far: ${fc.watch.violations.length}`);
    const back1 = await flushAndWait(fc, hv1, guests, 'unflush');
    console.log(`unflush (back to hv1): ${(back1.ms / 1000).toFixed(1)} s`);
    const flush = await flushAndWait(fc, hv1, guests, 'flush');
    const where = await placement(fc.cluster.hosts, guests);
    const spread = ['hv1', 'hv2', 'hv3'].map((h) => `${h}=${[...where.values()].filter((w) => w.includes(h)).length}`).join(' ');
    console.log(`flush (vmd, bounded concurrency): ${(flush.ms / 1000).toFixed(1)} s; after: ${spread}; flushed early: ${flush.earlyFinal.length}`);
    const back2 = await flushAndWait(fc, hv1, guests, 'unflush');
    console.log(`unflush (vmd): ${(back2.ms / 1000).toFixed(1)} s`);
    console.log(`\nDoubleRunWatch: ${fc.watch.polls} polls, ${fc.watch.violations.length} running on two hosts, ${fc.watch.activeOnTwo.length} active on two (incoming, paused)`);
    // The hosts' lists are taken side by side, not atomically: a sample at a switch-over may show both.
    for (const v of fc.watch.violations) console.log(`  running on two: ${v}`);
    console.log(`\nflush of 10 guests: one at a time ${(serialMs / 1000).toFixed(1)} s, vmd ${(flush.ms / 1000).toFixed(1)} s, ratio ${(serialMs / flush.ms).toFixed(2)}×`);
  } finally {
    await fc.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
