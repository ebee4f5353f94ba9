/**
 * Live-migration benchmark (issue 4 item 2): on a real 3-host harness cluster running the node
 * services, one TCG guest (96 MiB, diskless) defined in ZK on hv1 is migrated hv1 → hv2 → hv1 …
 * through vmd by writing what `pvc vm migrate` writes. Per run: total time (ZK write → `state=start`
 * on the target with virsh showing it there only) and the largest gap between console ticks (the
 * guest prints one per second, so a gap of ~1000 ms means no visible interruption; libvirt keeps no
 * completed-job downtime for a transient domain). Root only; ~3 min.
 *
 *   node --conditions=development --import tsx bench/migration.ts [--runs N]
 */
import { paths } from '@pvc/zk';
import { missingPrerequisites } from '../tests/cluster/harness/index.js';
import { startFailoverCluster } from '../tests/cluster/failover-scenario.js';
import { formatRun, migrate, placeGuest, type MigrationRun } from '../tests/cluster/migration-scenario.js';
import { staleBuilds } from '../tests/cluster/pvc-node.js';

function stats(xs: readonly number[]): string {
  const s = [...xs].sort((a, b) => a - b);
  const med = s[Math.floor(s.length / 2)] ?? NaN;
  return `median ${med} · min ${s[0]} · max ${s.at(-1)}`;
}

async function main(): Promise<void> {
  const i = process.argv.indexOf('--runs');
  const runs = i > 0 ? Number(process.argv[i + 1]) : 5;
  const missing = missingPrerequisites();
  if (missing.length > 0) throw new Error(`prerequisites missing:\n${missing.join('\n')}`);
  const stale = staleBuilds();
  if (stale.length > 0) console.log(`warning: dist older than src in ${stale.join(', ')} (the services run from dist)`);
  const fc = await startFailoverCluster('migb', { keepaliveInterval: 2, fenceIntervals: 6, successfulFence: 'none' }, (l) => console.log(`   ${l}`));
  const out: MigrationRun[] = [];
  try {
    const [hv1, hv2] = [fc.cluster.host('hv1'), fc.cluster.host('hv2')];
    const g = await placeGuest(fc, hv1, 'bvm1', 'e0000000-0000-4000-8000-0000000000b1');
    for (let r = 0; r < runs; r++) {
      const [from, to] = r % 2 === 0 ? [hv1, hv2] : [hv2, hv1];
      const run = await migrate(fc, g, from, to, r % 2 === 0 ? 'migrate' : 'unmigrate');
      const reason = await fc.zk.read(paths.domain(g.uuid).failedReason);
      console.log(`run ${r + 1}: ${formatRun(run)}${reason ? ` (failedreason: ${reason})` : ''}`);
      out.push(run);
    }
    console.log(`\nDoubleRunWatch: ${fc.watch.polls} polls, ${fc.watch.violations.length} samples with the guest running on two hosts, ${fc.watch.activeOnTwo.length} active on two (incoming, paused)`);
  } finally {
    await fc.close();
  }
  console.log(`\n${runs} live migrations of one 96 MiB TCG guest:`);
  console.log(`  total (ms):            ${stats(out.map((r) => r.totalMs))}`);
  console.log(`  console tick gap (ms): ${stats(out.map((r) => r.tickGapMs))}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
