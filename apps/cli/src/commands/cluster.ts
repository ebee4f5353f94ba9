import type { Command } from 'commander';
import { isSelector, SELECTORS } from '@pvc/placement';
import type { CliContext } from '../context.js';
import { writeFile } from 'node:fs/promises';
import { describeError } from '@pvc/runtime';
import { clusterKeys, pair, readKey } from '@pvc/zk';
import { usage } from '../errors.js';
import { backupTree, checkBackup, restoreTree } from '../ops/backup.js';
import { initCluster } from '../ops/init.js';
import { registerClusterFault } from './cluster-fault.js';
import { showStatus } from './cluster-status.js';
import { formatOf, formatOption, readInputFile } from './common.js';

/** `pvc cluster init|status|fault|maintenance|backup|restore`. */
export function registerCluster(program: Command, ctx: CliContext): void {
  const group = program.command('cluster').description('the cluster as a whole: init, status, faults, maintenance, backup, restore');

  group
    .command('init')
    .description('create the PVC tree (schema v15) on an empty Zookeeper')
    .option('-n, --name <name>', 'cluster name (stored in /config)', '')
    .option('--selector <selector>', `cluster-wide migration target selector (${SELECTORS.join(', ')})`, 'mem')
    .option('--overwrite', 'wipe an existing cluster tree first (needs --yes)')
    .option('-y, --yes', 'confirm --overwrite')
    .action(async (o: { name: string; selector: string; overwrite?: boolean; yes?: boolean }) => {
      if (!isSelector(o.selector)) throw usage(`--selector: "${o.selector}" is not one of ${SELECTORS.join(', ')}`);
      if (o.overwrite && !o.yes) throw usage('--overwrite deletes every VM, node and setting of the cluster: add --yes to confirm');
      const { zk, connection } = await ctx.cluster({ uninitialisedOk: true });
      const r = await initCluster(zk, { name: o.name, selector: o.selector, overwrite: o.overwrite === true });
      if (r.removed.length > 0) ctx.output.note(`Removed ${r.removed.join(', ')}`);
      ctx.output.line(`Initialised a PVC cluster (schema version 15, ${r.created} keys) on ${connection.hosts.join(',')}`);
    });

  group
    .command('status')
    .description('nodes, VMs by state, the primary, health and the stored faults')
    .addOption(formatOption())
    .action(async (o: { format: string }) => showStatus(ctx, formatOf(o)));

  registerClusterFault(group, ctx);

  group
    .command('maintenance <on|off>')
    .description('maintenance mode: no fencing and no faults while on')
    .action(async (mode: string) => {
      const on = ['on', 'true', 'yes'].includes(mode.toLowerCase());
      if (!on && !['off', 'false', 'no'].includes(mode.toLowerCase())) throw usage(`maintenance: expected on or off, got "${mode}"`);
      const { zk } = await ctx.cluster();
      if ((await readKey(zk, clusterKeys.maintenance)) === on) return ctx.output.line(`Maintenance mode is already ${on ? 'on' : 'off'}`);
      await zk.write([pair(clusterKeys.maintenance, on)]);
      ctx.output.line(`Maintenance mode ${on ? 'on: nodes are not fenced' : 'off'}`);
    });

  group
    .command('backup')
    .description('dump the whole cluster tree as JSON (stdout, or --file)')
    .option('-f, --file <path>', 'write to this file (mode 0600: it holds IPMI passwords) instead of stdout')
    .action(async (o: { file?: string }) => {
      const { zk } = await ctx.cluster();
      const backup = await backupTree(zk);
      const text = `${JSON.stringify(backup, null, 2)}\n`;
      if (!o.file) return void ctx.io.stdout.write(text);
      await writeFile(o.file, text, { mode: 0o600 }).catch((err: unknown) => {
        throw usage(`cannot write ${o.file ?? ''}: ${describeError(err)}`);
      });
      ctx.output.line(`Wrote ${Object.keys(backup).length} keys to ${o.file}`);
    });

  group
    .command('restore <file>')
    .description('write every key of a backup back into Zookeeper (keys not in the backup are kept)')
    .option('-y, --yes', 'confirm: this overwrites the cluster state, VM states included')
    .action(async (file: string, o: { yes?: boolean }) => {
      const text = await readInputFile(ctx, file);
      let doc: unknown;
      try {
        doc = JSON.parse(text);
      } catch (err) {
        throw usage(`${file}: not JSON: ${describeError(err)}`);
      }
      const backup = checkBackup(doc, file);
      if (!o.yes) throw usage(`restore overwrites ${Object.keys(backup).length} keys of the cluster: add --yes to confirm`);
      const { zk } = await ctx.cluster({ uninitialisedOk: true });
      const n = await restoreTree(zk, backup);
      ctx.output.line(`Restored ${n} keys from ${file}`);
    });
}
