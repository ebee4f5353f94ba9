import { hostname } from 'node:os';
import { Option, type Command } from 'commander';
import type { CliContext } from '../context.js';
import { refused, usage } from '../errors.js';
import { changeNode, isPrimary } from '../ops/node-change.js';
import { DEFAULT_LOG_LINES, parseLines, showNodeLog } from '../ops/node-log.js';
import type { NodeAction } from '../ops/node-plan.js';
import { showNodeInfo, showNodeList, type NodeFilters } from '../ops/node-show.js';
import { addWaitOptions, formatOf, formatOption, waitOf } from './common.js';

type WaitOpts = { wait?: boolean; waitTimeout?: string };

/** `pvc node list|info|log|flush|ready|primary|secondary|is-primary` (inventory §10.1). */
export function registerNode(program: Command, ctx: CliContext): void {
  const group = program.command('node').description('cluster nodes: list, info, log, flush, ready, primary, secondary');
  registerReads(group, ctx);
  registerChanges(group, ctx);
}

function registerReads(group: Command, ctx: CliContext): void {
  group
    .command('list')
    .description('list the nodes with their states, health, VMs, load and memory')
    .addOption(formatOption())
    .option('--daemon-state <state>', 'only nodes in this daemon state (run, init, shutdown, stop, dead, fenced)')
    .option('--coordinator-state <state>', 'only nodes in this coordinator state (primary, secondary, client, takeover, relinquish)')
    .option('--domain-state <state>', 'only nodes in this domain state (ready, flush, flushed, unflush, fence-flush)')
    .action(async (o: NodeFilters & { format?: string }) => {
      const { daemonState, coordinatorState, domainState } = o;
      await showNodeList(ctx, formatOf(o), { daemonState, coordinatorState, domainState });
    });

  group
    .command('info')
    .description('show one node: states, health, keepalive, resources, running VMs')
    .argument('<node>', 'node name')
    .addOption(formatOption())
    .option('-l, --long', 'also show every health plugin (delta and message)')
    .action(async (node: string, o: { format?: string; long?: boolean }) => {
      await showNodeInfo(ctx, node, formatOf(o), o.long === true);
    });

  group
    .command('log')
    .description("show the node's daemon log kept in Zookeeper")
    .argument('<node>', 'node name')
    .option('-l, --lines <n>', 'how many of the last lines to show', String(DEFAULT_LOG_LINES))
    .option('-f, --follow', 'keep printing new lines until Ctrl-C (-f is --follow here, as in the original)')
    .addOption(new Option('--format <format>', 'output format (json: {node, lines}; not with --follow)').choices(['human', 'json']).default('human'))
    .action(async (node: string, o: { lines?: string; follow?: boolean; format?: string }) => {
      const format = formatOf(o);
      if (format === 'json' && o.follow) throw usage('--format json cannot be combined with --follow');
      await showNodeLog(ctx, node, parseLines(o.lines), o.follow === true, format);
    });

  group
    .command('is-primary')
    .description('exit 0 if the node (default: this host) is the primary coordinator, 1 if not')
    .argument('[node]', 'node name (default: the short hostname of this machine)')
    .addOption(formatOption().default(undefined))
    .action(async (node: string | undefined, o: { format?: string }) => {
      const { zk } = await ctx.cluster();
      const r = await isPrimary(zk, node ?? hostname().split('.')[0] ?? '');
      if (o.format !== undefined && formatOf(o) === 'json') ctx.output.json(r);
      // Nothing on stdout for scripts (`if pvc node is-primary; then`); the reason goes to stderr.
      if (!r.primary) throw refused(`node ${r.node} is not the primary (primary_node is ${r.primaryNode || 'none'})`);
    });
}

const CHANGES: readonly { action: NodeAction; summary: string; what: string; alias?: string }[] = [
  { action: 'flush', summary: 'take the node out of service: its VMs move to other nodes (domainstate flush)', what: 'the flush' },
  { action: 'ready', summary: 'return the node to service: its VMs come back (domainstate unflush)', what: 'the return to service', alias: 'unflush' },
  { action: 'primary', summary: 'make the coordinator the primary (writes /config/primary_node)', what: 'the handover' },
  { action: 'secondary', summary: 'release the primary role of the coordinator (primary_node none; another takes over)', what: 'the handover' },
];

function registerChanges(group: Command, ctx: CliContext): void {
  for (const c of CHANGES) {
    const cmd = group.command(c.action).description(c.summary).argument('<node>', 'node name');
    if (c.alias) cmd.alias(c.alias);
    addWaitOptions(cmd, c.what);
    cmd.action(async (node: string, o: WaitOpts) => {
      await changeNode(ctx, c.action, node, waitOf(o));
    });
  }
}
