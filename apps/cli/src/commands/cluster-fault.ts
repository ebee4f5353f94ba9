import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { usage } from '../errors.js';
import { ackFaults, byLastReported, deleteFaults, findFaults, readFaults, type Fault } from '../ops/faults.js';
import { faultColumns } from './cluster-status.js';
import { formatOf, formatOption } from './common.js';

/**
 * `pvc cluster fault list|ack|ack-all|delete|delete-all` (the original's names and arguments:
 * several IDs at once; `ack-all`/`delete-all` confirm, here with `--yes`). `ack --all` and
 * `delete --all` are the same as the `-all` commands.
 */
export function registerClusterFault(cluster: Command, ctx: CliContext): void {
  const group = cluster.command('fault').description('the faults stored under /faults: list, acknowledge, delete');

  group
    .command('list [fault-id]')
    .description('list the faults, the last reported first (or only FAULT-ID); acknowledged ones count 0')
    .option('-l, --long', 'also when each was first reported and acknowledged')
    .addOption(formatOption())
    .action(async (id: string | undefined, o: { long?: boolean; format?: string }) => {
      const { zk } = await ctx.cluster();
      const faults = id === undefined ? await readFaults(zk) : await findFaults(zk, [id]);
      const sorted = [...faults].sort(byLastReported);
      if (formatOf(o) === 'json') return ctx.output.json(sorted);
      if (sorted.length === 0) return ctx.output.note('No faults');
      ctx.output.table(sorted, faultColumns(o.long === true));
      for (const f of sorted) for (const p of f.problems) ctx.output.note(`fault ${f.id}: ${p}`);
    });

  group
    .command('ack [fault-id...]')
    .description('acknowledge faults (status ack, ack_time now): they no longer count against the health until deleted')
    .option('--all', 'every fault (same as ack-all; needs --yes)')
    .option('-y, --yes', 'confirm --all')
    .action(async (ids: string[], o: { all?: boolean; yes?: boolean }) => ack(ctx, pick('ack', ids, o)));

  group
    .command('ack-all')
    .description('acknowledge every fault')
    .option('-y, --yes', 'confirm (required)')
    .action(async (o: { yes?: boolean }) => ack(ctx, pick('ack-all', [], { all: true, yes: o.yes })));

  group
    .command('delete [fault-id...]')
    .description('delete faults (each with its keys); one whose condition persists is raised again')
    .option('--all', 'every fault (same as delete-all; needs --yes)')
    .option('-y, --yes', 'confirm --all')
    .action(async (ids: string[], o: { all?: boolean; yes?: boolean }) => remove(ctx, pick('delete', ids, o)));

  group
    .command('delete-all')
    .description('delete every fault')
    .option('-y, --yes', 'confirm (required)')
    .action(async (o: { yes?: boolean }) => remove(ctx, pick('delete-all', [], { all: true, yes: o.yes })));
}

/** The faults a command is about: `all`, or the given IDs (one of the two). */
type Pick = { all: true } | { all: false; ids: string[] };

/** Checks the arguments of ack/delete: IDs or --all (with --yes), not both, not neither. */
export function pick(command: string, ids: readonly string[], o: { all?: boolean | undefined; yes?: boolean | undefined }): Pick {
  if (o.all === true) {
    if (ids.length > 0) throw usage(`${command}: give fault IDs or --all, not both`);
    if (o.yes !== true) throw usage(`${command} applies to every fault: add --yes to confirm`);
    return { all: true };
  }
  if (ids.length === 0) throw usage(`${command}: give one or more fault IDs (see "pvc cluster fault list"), or --all`);
  return { all: false, ids: [...ids] };
}

async function chosen(ctx: CliContext, p: Pick): Promise<Fault[]> {
  const { zk } = await ctx.cluster();
  return p.all ? readFaults(zk) : findFaults(zk, p.ids, 'nothing written');
}

async function ack(ctx: CliContext, p: Pick): Promise<void> {
  const faults = await chosen(ctx, p);
  if (faults.length === 0) return ctx.output.line('No faults to acknowledge');
  const { zk } = await ctx.cluster();
  const r = await ackFaults(zk, faults, ctx.io.clock.now());
  if (r.acked.length > 0) ctx.output.line(`Acknowledged fault${r.acked.length === 1 ? '' : 's'} ${r.acked.join(', ')}`);
  if (r.already.length > 0) ctx.output.line(`Fault${r.already.length === 1 ? '' : 's'} ${r.already.join(', ')} already acknowledged`);
}

async function remove(ctx: CliContext, p: Pick): Promise<void> {
  const faults = await chosen(ctx, p);
  if (faults.length === 0) return ctx.output.line('No faults to delete');
  const { zk } = await ctx.cluster();
  const ids = faults.map((f) => f.id);
  await deleteFaults(zk, ids);
  ctx.output.line(`Deleted fault${ids.length === 1 ? '' : 's'} ${ids.join(', ')}`);
}
