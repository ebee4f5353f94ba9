/**
 * Live migration of an RBD-backed guest against a diskless one (issue 13 item 7), modelled on
 * bench/migration.ts: one real 3-host harness cluster with the node services and a real Ceph; two
 * 96 MiB TCG guests on hv1 — `rvm1` with a raw virtio disk on its own RBD image (it wrote a marker
 * at boot and writes a counter every second: `disk write <n> ok|fail`), `dvm1` diskless — are
 * migrated hv1 → hv2 → hv1 … alternately (rbd, diskless, rbd, …) with `pvc vm migrate` /
 * `pvc vm unmigrate`. Per migration: total (ZK write → `state=start` on the target with virsh
 * showing it there only), the largest console tick gap, and for the RBD guest the disk writes
 * printed during it (none may fail). Root only; ~4 min.
 *
 *   node --conditions=development --import tsx bench/rbd-migration.ts [--runs N]   (N per kind, default 4)
 */
import { paths } from '@pvc/zk';
import { missingPrerequisites } from '../tests/cluster/harness/index.js';
import { startFailoverCluster } from '../tests/cluster/failover-scenario.js';
import { formatRun, migrate, placeGuest, type MigGuest, type MigrationRun } from '../tests/cluster/migration-scenario.js';
import { staleBuilds } from '../tests/cluster/pvc-node.js';
import { consoleDisk, consoleSize } from '../tests/support/guest/console.js';
import { median, waitMarkersWritten } from './rbd-probes.js';

type Kind = 'rbd' | 'diskless';

interface Run extends MigrationRun {
  kind: Kind;
  n: number;
  writes: number;
  failedWrites: number;
  notes: string[];
}

const MARKER = 'mig-rvm1';

function stats(xs: readonly number[]): string {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? '—' : `median ${median(s)} · min ${s[0]} · max ${s.at(-1)}`;
}

async function main(): Promise<void> {
  const i = process.argv.indexOf('--runs');
  const runs = i > 0 ? Number(process.argv[i + 1]) : 4;
  const missing = missingPrerequisites();
  if (missing.length > 0) throw new Error(`prerequisites missing:\n${missing.join('\n')}`);
  const stale = staleBuilds();
  if (stale.length > 0) console.log(`warning: dist older than src in ${stale.join(', ')} (the services run from dist)`);
  const fc = await startFailoverCluster('rmgb', { keepaliveInterval: 2, fenceIntervals: 6, successfulFence: 'none' }, (l) => console.log(`   ${l}`), { ceph: true });
  const out: Run[] = [];
  let allWrites = { ok: 0, fail: 0 };
  try {
    const [hv1, hv2] = [fc.cluster.host('hv1'), fc.cluster.host('hv2')];
    const guests: Record<Kind, MigGuest> = {
      rbd: await placeGuest(fc, hv1, 'rvm1', 'e0000000-0000-4000-8000-0000000000c1', { rbd: { marker: MARKER, diskWriteS: 1 } }),
      diskless: await placeGuest(fc, hv1, 'dvm1', 'e0000000-0000-4000-8000-0000000000d1'),
    };
    await waitMarkersWritten(fc.cluster, [guests.rbd], () => MARKER);
    const rlog = fc.cluster.guest.consoleLog('rvm1');
    const boot = consoleDisk(rlog, 'rvm1');
    console.log(`rvm1: marker boot ${JSON.stringify(boot.boots)}, wrote ${JSON.stringify(boot.wrote)}, ${boot.writes.length} periodic writes so far`);
    for (let r = 0; r < runs; r++) {
      const [from, to] = r % 2 === 0 ? [hv1, hv2] : [hv2, hv1];
      for (const kind of ['rbd', 'diskless'] as const) {
        const g = guests[kind];
        const log = fc.cluster.guest.consoleLog(g.name);
        const offset = consoleSize(log);
        const run = await migrate(fc, g, from, to, r % 2 === 0 ? 'migrate' : 'unmigrate');
        const reason = await fc.zk.read(paths.domain(g.uuid).failedReason);
        const notes: string[] = [];
        if (reason) notes.push(`failedreason: ${reason}`);
        if (run.ticksAfter <= run.ticksBefore) notes.push('tick count did not go on (a reboot, not a live migration)');
        const d = kind === 'rbd' ? consoleDisk(log, g.name, offset) : undefined;
        const failed = d?.writes.filter((w) => !w.ok).length ?? 0;
        if (d && d.errors.length > 0) notes.push(`disk errors: ${d.errors.join('; ')}`);
        if (d && d.boots.length > 0) notes.push(`marker boot during the migration (a reboot): ${JSON.stringify(d.boots)}`);
        const row: Run = { ...run, kind, n: r + 1, writes: d?.writes.length ?? 0, failedWrites: failed, notes };
        console.log(`run ${r + 1} ${kind.padEnd(8)}: ${formatRun(run)}${d ? `; disk writes ${d.writes.length} (${failed} failed)` : ''}${notes.length ? ` (${notes.join('; ')})` : ''}`);
        out.push(row);
      }
    }
    const all = consoleDisk(rlog, 'rvm1');
    allWrites = { ok: all.writes.filter((w) => w.ok).length, fail: all.writes.filter((w) => !w.ok).length };
    console.log(`\nrvm1 disk writes over the whole run: ${allWrites.ok} ok, ${allWrites.fail} failed; disk errors: ${all.errors.length ? all.errors.join('; ') : 'none'}`);
    console.log(`DoubleRunWatch: ${fc.watch.polls} polls, ${fc.watch.violations.length} samples with a guest running on two hosts, ${fc.watch.activeOnTwo.length} active on two (incoming, paused)`);
  } finally {
    await fc.close();
  }
  console.log('\n| run | kind | from → to | total ms | largest tick gap ms | disk writes during (failed) | notes |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of out) {
    console.log(`| ${r.n} | ${r.kind} | ${r.from} → ${r.to} | ${r.totalMs} | ${r.tickGapMs} | ${r.kind === 'rbd' ? `${r.writes} (${r.failedWrites})` : '—'} | ${r.notes.join('; ')} |`);
  }
  const of = (k: Kind): Run[] => out.filter((r) => r.kind === k);
  console.log(`\n${runs} live migrations of each 96 MiB TCG guest, alternating:`);
  for (const k of ['rbd', 'diskless'] as const) {
    console.log(`  ${k.padEnd(8)} total (ms): ${stats(of(k).map((r) => r.totalMs))}; tick gap (ms): ${stats(of(k).map((r) => r.tickGapMs))}`);
  }
  const ratio = (f: (r: Run) => number): string => {
    const a = median(of('rbd').map(f));
    const b = median(of('diskless').map(f));
    return a !== undefined && b !== undefined && b > 0 ? `${(a / b).toFixed(2)}×` : '—';
  };
  console.log(`  ratio RBD/diskless of the medians: total ${ratio((r) => r.totalMs)}, tick gap ${ratio((r) => r.tickGapMs)}`);
  console.log(`  failed disk writes during the migrations: ${out.reduce((a, r) => a + r.failedWrites, 0)} (whole run: ${allWrites.fail})`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
