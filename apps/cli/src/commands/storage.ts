import { Option, type Command } from 'commander';
import { POOL_TIERS, type PoolTier } from '@pvc/zk';
import type { CliContext } from '../context.js';
import { refused, usage } from '../errors.js';
import { showCephText, showOsdList, showPoolList } from '../ops/storage-show.js';
import { formatOf, formatOption, notYetGroup } from './common.js';
import { CARRIED_OUT, changeOptions, confirm, countArg, nameArg, runChange, type ChangeOpts } from './storage-common.js';
import { registerSnapshot, registerVolume } from './storage-volume.js';

const NOT_YET = 'not available yet: cephd does not carry it out in this release';

/**
 * `pvc storage status|util|osd list|pool ...|volume ...` (inventory §10.1). Reads come from
 * Zookeeper; changes are requests that cephd on the primary carries out (ops/storage-request.ts).
 * The original's `benchmark` and the OSD changes say that they are not available yet.
 */
export function registerStorage(program: Command, ctx: CliContext): void {
  const group = program.command('storage').description('Ceph storage: status, util, OSDs, pools, volumes and snapshots');
  for (const which of ['status', 'util'] as const) {
    group.command(which)
      .description(which === 'status' ? 'show the Ceph cluster status (ceph status, as cephd on the primary last stored it)' : 'show the Ceph utilization (ceph df, as cephd on the primary last stored it)')
      .addOption(formatOption())
      .action(async (o: { format?: string }) => showCephText(ctx, which, formatOf(o)));
  }
  notYetGroup(group, 'benchmark', 'storage benchmarks', 'storage benchmarks are not available yet', ['run', 'info', 'list']);
  const osd = group.command('osd').description('Ceph OSDs: list (the changes are not available yet)');
  osd.command('list [limit]')
    .description('list the OSDs with their node and stats; [limit] is a regex on the OSD id')
    .addOption(formatOption())
    .action(async (limit: string | undefined, o: { format?: string }) => showOsdList(ctx, limit, formatOf(o)));
  for (const sub of ['add', 'replace', 'refresh', 'remove', 'in', 'out', 'set', 'unset']) {
    osd.command(sub).description(NOT_YET).allowUnknownOption(true).allowExcessArguments(true).action(() => {
      throw refused(`storage osd ${sub}: ${NOT_YET}`);
    });
  }
  registerPool(group, ctx);
  registerVolume(group, ctx);
  registerSnapshot(group, ctx);
}

/** `--replcfg copies=N,mincopies=M` (the original's form). */
export function parseReplCfg(text: string): { copies: number; minCopies: number } {
  const m = /^copies=(\d+),mincopies=(\d+)$/.exec(text.trim());
  const [copies, minCopies] = [Number(m?.[1]), Number(m?.[2])];
  if (!m || copies < 1 || minCopies < 1 || minCopies > copies) {
    throw usage(`invalid --replcfg "${text}": expected copies=<n>,mincopies=<m> with 1 ≤ m ≤ n, e.g. copies=3,mincopies=2`);
  }
  return { copies, minCopies };
}

function registerPool(group: Command, ctx: CliContext): void {
  const pool = group.command('pool').description('RBD pools: add, remove, set-pgs, list');
  changeOptions(pool.command('add <name> <pgs>')
    .summary('add an RBD pool')
    .description(`add RBD pool <name> with <pgs> placement groups: ceph osd pool create, size/min_size from --replcfg, application rbd; a failure part-way removes it again. ${CARRIED_OUT}`)
    .addOption(new Option('-t, --tier <tier>', 'device class of its OSDs (a CRUSH rule <tier>_tier); default: any').choices([...POOL_TIERS]).default('default'))
    .option('--replcfg <cfg>', 'replication: copies=<n>,mincopies=<m>', 'copies=3,mincopies=2'))
    .action(async (name: string, pgs: string, o: ChangeOpts & { tier: PoolTier; replcfg: string }) => {
      const request = { op: 'pool.add', pool: nameArg('pool', name), pgs: countArg('<pgs>', pgs), tier: o.tier, ...parseReplCfg(o.replcfg) } as const;
      await runChange(ctx, request, o);
    });
  changeOptions(pool.command('remove <name>')
    .summary('remove an RBD pool with all its volumes (needs --yes)')
    .description(`remove RBD pool <name>: every volume with its snapshots first, then the pool. Needs --yes. ${CARRIED_OUT}`)
    .option('-y, --yes', 'confirm: the pool and all its volumes are deleted'))
    .action(async (name: string, o: ChangeOpts & { yes?: boolean }) => {
      confirm(o, `pool remove deletes pool "${name}" with all its volumes and snapshots`);
      await runChange(ctx, { op: 'pool.remove', pool: nameArg('pool', name) }, o);
    });
  changeOptions(pool.command('set-pgs <name> <pgs>')
    .summary('set the placement group count of a pool')
    .description(`set pg_num and pgp_num of pool <name> to <pgs>, a power of 2. ${CARRIED_OUT}`))
    .action(async (name: string, pgs: string, o: ChangeOpts) => {
      const n = countArg('<pgs>', pgs);
      if ((n & (n - 1)) !== 0) throw usage(`<pgs>: the PG count must be a power of 2, not ${n}`);
      await runChange(ctx, { op: 'pool.set-pgs', pool: nameArg('pool', name), pgs: n }, o);
    });
  pool.command('list [limit]')
    .description('list the pools with their tier, PGs, volumes and stats; [limit] is a regex on the name')
    .addOption(formatOption())
    .action(async (limit: string | undefined, o: { format?: string }) => showPoolList(ctx, limit, formatOf(o)));
}
