import type { Command } from 'commander';
import { isSelector, SELECTORS } from '@pvc/placement';
import type { CliContext } from '../context.js';
import { usage } from '../errors.js';
import { initCluster } from '../ops/init.js';

/** `pvc cluster init|status|maintenance|backup|restore`. */
export function registerCluster(program: Command, ctx: CliContext): void {
  const group = program.command('cluster').description('the cluster as a whole: init, status, maintenance, backup, restore');

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
}
