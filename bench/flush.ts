/**
 * Node flush benchmark (issue 4 item 3): on a real 3-host harness cluster running the node
 * services, 10 TCG guests (72–96 MiB, diskless) defined in ZK on hv1. In the same run:
 *
 * 1. one at a time (the original's flush thread): for each guest in turn the bench writes what
 *    that thread writes (`state=migrate`, `node=<target>`, `lastnode=hv1`, targets alternating
 *    hv2/hv3 as the `mem` selector would on equal nodes) and waits until the guest runs on the
 *    target only with `state=start` before the next; the same vmd migration machinery moves it;
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
  for (const [i, g] of guests.entries()) {
    const to = fc.cluster.host(i % 2 === 0 ? 'hv2' : 'hv3');
    const p = paths.domain(g.uuid);
    await fc.zk.write([[p.state, 'migrate'], [p.node, to.name], [p.lastNode, hv1.name]]);
    await waitFor(`${g.name} on ${to.name}`, 180_000, async () => {
      const [st, onTo, onFrom] = await Promise.all([fc.zk.read(p.state), runningOn(to), runningOn(hv1)]);
      return st === 'start' && onTo.includes(g.uuid) && !onFrom.includes(g.uuid) ? true : undefined;
    }, 100);
  }
  return realClock.now() - t0;
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
    console.log(`one at a time: ${(serialMs / 1000).toFixed(1)} s`);
    const back1 = await flushAndWait(fc, hv1, guests, 'unflush');
    console.log(`unflush (back to hv1): ${(back1.ms / 1000).toFixed(1)} s`);
    const flush = await flushAndWait(fc, hv1, guests, 'flush');
    const where = await placement(fc.cluster.hosts, guests);
    const spread = ['hv1', 'hv2', 'hv3'].map((h) => `${h}=${[...where.values()].filter((w) => w.includes(h)).length}`).join(' ');
    console.log(`flush (vmd, bounded concurrency): ${(flush.ms / 1000).toFixed(1)} s; after: ${spread}; flushed early: ${flush.earlyFinal.length}`);
    const back2 = await flushAndWait(fc, hv1, guests, 'unflush');
    console.log(`unflush (vmd): ${(back2.ms / 1000).toFixed(1)} s`);
    console.log(`\nDoubleRunWatch: ${fc.watch.polls} polls, ${fc.watch.violations.length} running on two hosts, ${fc.watch.activeOnTwo.length} active on two (incoming, paused)`);
    console.log(`\nflush of 10 guests: one at a time ${(serialMs / 1000).toFixed(1)} s, vmd ${(flush.ms / 1000).toFixed(1)} s, ratio ${(serialMs / flush.ms).toFixed(2)}×`);
  } finally {
    await fc.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
