import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { usage } from '../errors.js';
import { findVm } from '../lookup.js';
import { modifyVm } from '../ops/vm-config-edit.js';
import { GUARD_HELP, MIGRATION_METHODS, NODE_SELECTORS } from '../ops/vm-config-guards.js';
import { setMeta, type MetaOptions } from '../ops/vm-config-meta.js';
import { undefineVm } from '../ops/vm-config-undefine.js';
import { defineVm, type DefineOptions, type DefineResult } from '../ops/vm-define.js';
import { parseWaitTimeout } from '../wait.js';
import { formatOf, formatOption, readInputFile } from './common.js';
import { addRestartOptions, afterXmlChange, registerVmEdits } from './vm-config-edit.js';

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** The placement options shared by `vm define` and `vm meta`. */
function addMetaOptions(cmd: Command): Command {
  return cmd
    .option('-l, --node-limit <nodes>', 'comma-separated nodes the VM may run on ("" = any node)')
    .option('-s, --node-selector <selector>', `how a target node is chosen: ${NODE_SELECTORS.join(', ')} (none = the cluster's selector)`)
    .option('--autostart', 'start the VM when its node becomes ready after a flush')
    .option('--no-autostart', 'do not autostart the VM')
    .option('-m, --migration-method <method>', `how the VM migrates: ${MIGRATION_METHODS.join(', ')}`)
    .option('--migration-max-downtime <ms>', 'longest pause of a live migration, milliseconds (default 300)')
    .option('--profile <name>', 'provisioner profile of the VM ("" = none)');
}

/** `pvc vm define|modify|undefine|meta|tag|vcpu|memory`. */
export function registerVmConfig(group: Command, ctx: CliContext): void {
  registerDefine(group, ctx);
  registerModify(group, ctx);
  registerUndefine(group, ctx);
  registerMeta(group, ctx);
  registerVmEdits(group, ctx);
}

type DefineFlags = Omit<DefineOptions, 'tags' | 'protectedTags'> & { tag?: string[]; protectedTag?: string[]; format?: string };

function registerDefine(group: Command, ctx: CliContext): void {
  addMetaOptions(
    group.command('define <xmlfile>')
      .summary('define a VM from a libvirt domain XML file')
      .description(`define a VM from a libvirt domain XML file (state stop). A fresh UUID is inserted when the XML has none. Without --target the node is chosen like a migration target. ${GUARD_HELP}`)
      .option('-t, --target <node>', 'the node the VM is assigned to'),
  )
    .option('--tag <tag>', 'a tag (repeatable)', collect)
    .option('--protected-tag <tag>', 'a protected tag (repeatable)', collect)
    .addOption(formatOption())
    .action(async (file: string, o: DefineFlags) => {
      const text = await readInputFile(ctx, file);
      const { zk } = await ctx.cluster();
      const r = await defineVm(zk, text, file, { ...o, tags: o.tag ?? [], protectedTags: o.protectedTag ?? [] }, randomUUID);
      printDefined(ctx, r, formatOf(o));
    });
}

function printDefined(ctx: CliContext, r: DefineResult, format: 'human' | 'json'): void {
  if (format === 'json') return ctx.output.json(r);
  ctx.output.line(`Defined VM "${r.name}" (state stop)`);
  ctx.output.keyValues([
    ['UUID', `${r.uuid}${r.uuidGenerated ? ' (generated: the XML had no <uuid>; inserted into the stored XML)' : ''}`],
    ['Node', `${r.node} (${r.placement})`],
  ]);
}

function registerModify(group: Command, ctx: CliContext): void {
  addRestartOptions(
    group.command('modify <vm> <xmlfile>')
      .summary("replace a VM's XML (optionally restarting it)")
      .description(`replace a VM's XML. Its <uuid> must be absent or the VM's; a new <name> renames the VM when no other VM has it. ${GUARD_HELP}`),
  )
    .option('-y, --yes', 'accepted for compatibility with the original (which asks before a restart); pvc never asks')
    .action(async (vm: string, file: string, o: { restart?: boolean; wait?: boolean; waitTimeout?: string }) => {
      const text = await readInputFile(ctx, file);
      const { zk } = await ctx.cluster();
      const change = await modifyVm(zk, await findVm(zk, vm), text, file);
      ctx.output.line(`Modified VM "${change.ref.name}"${change.renamedFrom !== undefined ? ` (renamed from "${change.renamedFrom}")` : ''}`);
      await afterXmlChange(ctx, change, o);
    });
}

function registerUndefine(group: Command, ctx: CliContext): void {
  group.command('undefine <vm>')
    .summary('remove a VM from the cluster (stops it first; needs --yes)')
    .description('remove a VM from the cluster (its disks are kept): stops it when it is not stopped, waits until no node runs it, then deletes it. Needs --yes')
    .option('-y, --yes', 'confirm: the VM definition is deleted')
    .option('--wait-timeout <seconds>', 'give up waiting for the VM to stop after this long (exit 4, nothing deleted)', '300')
    .action(async (vm: string, o: { yes?: boolean; waitTimeout?: string }) => {
      if (!o.yes) throw usage(`vm undefine deletes VM "${vm}" from the cluster: add --yes to confirm`);
      const waitS = parseWaitTimeout(o.waitTimeout);
      const { zk } = await ctx.cluster();
      for (const step of await undefineVm(ctx, await findVm(zk, vm), waitS)) ctx.output.line(step);
    });
}

function registerMeta(group: Command, ctx: CliContext): void {
  addMetaOptions(group.command('meta <vm>').description('change the placement and migration settings of a VM (at least one option; one transaction)'))
    .action(async (vm: string, o: MetaOptions) => {
      const { zk } = await ctx.cluster();
      const ref = await findVm(zk, vm);
      const changes = await setMeta(zk, ref, o);
      ctx.output.line(`Set ${changes.map((c) => `${c.key}=${c.value === '' ? '""' : c.value}`).join(', ')} on VM "${ref.name}"`);
    });
}
