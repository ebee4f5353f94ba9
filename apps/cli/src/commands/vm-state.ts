import type { Command } from 'commander';
import { domainKeys, readKey } from '@pvc/zk';
import type { CliContext } from '../context.js';
import { usage } from '../errors.js';
import { findVm } from '../lookup.js';
import { changeVmState, type StateAction } from '../ops/vm-state.js';
import { migrateVm, type MigrateAction } from '../ops/vm-migrate.js';
import { listVms, showVmInfo } from '../ops/vm-view.js';
import { showVmLog } from '../ops/vm-log.js';
import { parseWaitTimeout } from '../wait.js';
import { addWaitOptions, formatOf, formatOption, waitOf } from './common.js';

interface StateOpts {
  force?: boolean;
  wait?: boolean;
  waitTimeout?: string;
}

const STATE_HELP: Readonly<Record<StateAction, { summary: string; wait: string; force?: string }>> = {
  start: {
    summary: 'start a VM on its node (state start). A VM already in start gets start rewritten, which makes its node start it if it is not running (as the original does); refused for a mirror unless --force',
    wait: 'the VM runs on its node (listed in its runningdomains); state fail is a failure with its failedreason',
    force: 'start a mirror destination anyway',
  },
  stop: {
    summary: 'stop a VM at once (state stop: its node destroys it); refused for a mirror unless --force',
    wait: 'the VM runs on no node',
    force: 'stop a mirror destination anyway',
  },
  shutdown: {
    summary: 'shut a running VM down gracefully (ACPI; its node destroys it after vm_shutdown_timeout); needs state start',
    wait: 'the state is stop and the VM runs on no node',
  },
  restart: {
    summary: 'restart a running VM (its node shuts it down and starts it again); needs state start',
    wait: 'the state is start again and the VM runs on its node',
  },
  disable: {
    summary: 'disable a VM (state disable: nothing starts it). A running VM is shut down first and disable is written once it has stopped (bounded by --wait-timeout, default 300 s); refused during a restart or migration',
    wait: 'the state is disable',
    force: 'stop a running VM at once instead of shutting it down (and disable a mirror destination)',
  },
};

function registerStateCommands(group: Command, ctx: CliContext): void {
  for (const action of ['start', 'stop', 'shutdown', 'restart', 'disable'] as const) {
    const help = STATE_HELP[action];
    const cmd = group.command(`${action} <vm>`).summary(help.summary.split(/[.(]/)[0]!.trim()).description(`${help.summary}. --wait: until ${help.wait}`);
    if (help.force) cmd.option('--force', help.force);
    addWaitOptions(cmd).action(async (vm: string, o: StateOpts) => {
      const waitS = waitOf(o);
      const { zk } = await ctx.cluster();
      const ref = await findVm(zk, vm);
      const stopTimeoutS = parseWaitTimeout(o.waitTimeout);
      ctx.output.line(await changeVmState(ctx, ref, action, { force: o.force === true, stopTimeoutS, ...(waitS === undefined ? {} : { waitS }) }));
    });
  }
}

interface MigrateOpts extends StateOpts {
  target?: string;
  forceLive?: boolean;
}

const MIGRATE_HELP: Readonly<Record<MigrateAction, string>> = {
  migrate: 'move a VM to another node temporarily (lastnode = its current node, so "unmigrate" brings it back); a running VM is migrated by its node (live, else by shutdown), a stopped one is just reassigned; without --target the node selector picks an eligible node; refused when already migrated unless --force',
  move: 'move a VM to another node permanently (lastnode cleared); a move to the current node of a migrated VM only clears lastnode',
  unmigrate: 'return a migrated VM to the node it was migrated from (its lastnode)',
};

function registerMigrateCommands(group: Command, ctx: CliContext): void {
  for (const action of ['migrate', 'move', 'unmigrate'] as const) {
    const cmd = group.command(`${action} <vm>`).summary(MIGRATE_HELP[action].split(/[;(]/)[0]!.trim()).description(
      `${MIGRATE_HELP[action]}. --wait: until the migration is done (state start on the target, or the kept state of a stopped VM); an aborted migration is a failure with its reason`,
    );
    if (action !== 'unmigrate') cmd.option('-t, --target <node>', 'the node to move to (must be run + ready, inside node_limit, with room)');
    if (action === 'migrate') {
      cmd.option('--force', 'migrate an already migrated VM again (keeps its original lastnode)')
        .option('--force-live', 'live migration only (state migrate-live): abort instead of falling back to shutdown');
    }
    addWaitOptions(cmd).action(async (vm: string, o: MigrateOpts) => {
      const waitS = waitOf(o);
      const { zk } = await ctx.cluster();
      const ref = await findVm(zk, vm);
      const opts = {
        ...(o.target === undefined ? {} : { target: o.target }), force: o.force === true, forceLive: o.forceLive === true,
        ...(waitS === undefined ? {} : { waitS }),
      };
      ctx.output.line(await migrateVm(ctx, ref, action, opts));
    });
  }
}

interface ListOpts {
  target?: string;
  node?: string;
  state?: string;
  tag?: string[];
  negate?: boolean;
  raw?: boolean;
  format?: string;
}

function registerViewCommands(group: Command, ctx: CliContext): void {
  group.command('list [limit]')
    .description('list VMs: name, UUID, state, node, migrated-from, vCPUs, memory, tags, autostart ([limit]: a regular expression on name or UUID)')
    .option('-t, --target <node>', 'only VMs assigned to this node')
    .option('--node <node>', 'same as --target')
    .option('-s, --state <state>', 'only VMs in this state')
    .option('-g, --tag <tag>', 'only VMs with this tag (repeatable: all of them)', (v: string, prev: string[] = []) => [...prev, v])
    .option('-n, --negate', 'invert each given filter (VMs NOT on the node, NOT in the state, WITHOUT the tags)')
    .option('-r, --raw', 'names only, one per line')
    .addOption(formatOption())
    .action(async (limit: string | undefined, o: ListOpts) => {
      if (o.target !== undefined && o.node !== undefined && o.target !== o.node) throw usage('--target and --node name different nodes');
      const node = o.target ?? o.node;
      await listVms(ctx, {
        ...(limit === undefined ? {} : { limit }), ...(node === undefined ? {} : { node }), ...(o.state === undefined ? {} : { state: o.state }),
        tags: o.tag ?? [], negate: o.negate === true,
      }, formatOf(o), o.raw === true);
    });

  group.command('info <vm>')
    .description('show a VM: state, node, where it runs, resources, failed reason, VNC, stats, settings and problems of its data')
    .option('-l, --long', 'also the migration downtime, profile, MACs, RBD volumes and the full stats')
    .addOption(formatOption())
    .action(async (vm: string, o: { long?: boolean; format?: string }) => {
      const { zk } = await ctx.cluster();
      await showVmInfo(ctx, await findVm(zk, vm), formatOf(o), o.long === true);
    });

  group.command('dump <vm>')
    .description('print the VM\'s stored libvirt XML as it is')
    .addOption(formatOption())
    .action(async (vm: string, o: { format?: string }) => {
      const { zk } = await ctx.cluster();
      const ref = await findVm(zk, vm);
      const xml = await readKey(zk, domainKeys(ref.uuid).xml);
      if (formatOf(o) === 'json') ctx.output.json({ name: ref.name, uuid: ref.uuid, xml });
      else ctx.io.stdout.write(xml.endsWith('\n') || xml === '' ? xml : `${xml}\n`);
    });

  group.command('log <vm>')
    .description('show the VM\'s console log (the last lines its node keeps); --follow prints new lines until Ctrl-C')
    .option('-l, --lines <n>', 'how many of the last lines', '1000')
    .option('--follow', 'keep printing new lines as they come')
    .addOption(formatOption())
    .action(async (vm: string, o: { lines: string; follow?: boolean; format?: string }) => {
      const lines = Number(o.lines);
      if (!Number.isInteger(lines) || lines < 0) throw usage(`--lines: expected a whole number ≥ 0, got "${o.lines}"`);
      const format = formatOf(o);
      if (format === 'json' && o.follow) throw usage('--follow cannot be combined with --format json');
      const { zk } = await ctx.cluster();
      await showVmLog(ctx, await findVm(zk, vm), lines, o.follow === true, format);
    });
}

/** `pvc vm start|stop|shutdown|restart|disable|migrate|unmigrate|move|list|info|dump|log`. */
export function registerVmState(group: Command, ctx: CliContext): void {
  registerStateCommands(group, ctx);
  registerMigrateCommands(group, ctx);
  registerViewCommands(group, ctx);
}
