/**
 * Fencer dies mid-fence (issue 14 item 1), on the real 4-host harness cluster: per run, the time
 * from the fencer's death until the guests of both dead hosts run on the survivors, against the
 * target 2 × window + 5 s (window 1 s × 3), and whether the fencer was also the Zookeeper leader.
 * Which coordinator wins the fence lock is a race, so the runs go on (up to `--max-runs`) until both
 * cases were seen `--runs` times each, or the maximum is reached. Root only; ~2 min a run.
 *
 *   node --conditions=development --import tsx bench/fencer-death.ts [--runs 1] [--max-runs 6]
 */
import { missingPrerequisites } from '../tests/cluster/harness/index.js';
import { formatFencerDeath, killFencerMidFence, startFencerDeathCluster, type FencerDeathRun } from '../tests/cluster/fencer-death-scenario.js';
import { staleBuilds } from '../tests/cluster/pvc-node.js';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) || dflt : dflt;
};

const sec = (ms: number | undefined): string => (ms === undefined ? '—' : (ms / 1000).toFixed(1));

function row(r: FencerDeathRun, n: number): string {
  const at = (name: string): string => {
    const x = r.running.get(name);
    return x && r.fencerDiedAt !== undefined ? `${sec(x.at - r.fencerDiedAt)} (${x.host})` : '—';
  };
  const [victimGuest, fencerGuest] = r.guests;
  const notes = [
    ...(r.doubleRuns.length > 0 ? [`DOUBLE RUN: ${r.doubleRuns.join('; ')}`] : []),
    ...(r.totalMs === undefined ? ['not every guest ran elsewhere'] : []),
  ];
  return `| ${n} | ${r.fencer ?? '?'} | ${r.leader ?? '?'} | ${r.leaderWasFencer ? 'yes' : 'no'} | ${sec(r.windowMs)} | ${victimGuest ? at(victimGuest.name) : '—'} | ${fencerGuest ? at(fencerGuest.name) : '—'} | ${sec(r.totalMs)} | ${sec(r.boundMs)} | ${notes.join('; ')} |`;
}

async function main(): Promise<void> {
  const perCase = arg('--runs', 1);
  const maxRuns = arg('--max-runs', 6);
  const missing = missingPrerequisites();
  if (missing.length > 0) throw new Error(`prerequisites missing:\n${missing.join('\n')}`);
  const stale = staleBuilds();
  if (stale.length > 0) console.log(`warning: dist older than src in ${stale.join(', ')} (the services run from dist)`);
  const runs: FencerDeathRun[] = [];
  const seen = (leader: boolean): number => runs.filter((r) => r.leaderWasFencer === leader && r.totalMs !== undefined).length;
  while (runs.length < maxRuns && (seen(true) < perCase || seen(false) < perCase)) {
    console.log(`\n== run ${runs.length + 1}`);
    const log = (l: string): void => console.log(`   ${l}`);
    const { fc, byHost } = await startFencerDeathCluster('fdbn', log);
    try {
      const r = await killFencerMidFence(fc, byHost, log);
      for (const l of formatFencerDeath(r)) log(l);
      runs.push(r);
    } finally {
      await fc.close();
    }
  }
  console.log('\n| run | fencer | ZK leader before | leader = fencer | window s | first victim’s guest running s | fencer’s guest running s | total s | bound s | notes |');
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const [i, r] of runs.entries()) console.log(row(r, i + 1));
  console.log('\nTimes are from the fencer’s death (network cut + BMC power off, issued the moment the first victim was declared dead).');
}

await main();
