import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { findVm } from '../lookup.js';
import { readVmSummary } from '../ops/read.js';
import { setMemory, setVcpus, type XmlChange } from '../ops/vm-config-edit.js';
import { GUARD_HELP, parsePositiveInt } from '../ops/vm-config-guards.js';
import { addTag, removeTag } from '../ops/vm-config-meta.js';
import { changeVmState } from '../ops/vm-state.js';
import { addWaitOptions, formatOf, formatOption, waitOf } from './common.js';

/** `-r, --restart` and its `--wait` on commands that change the XML of a possibly running VM. */
export function addRestartOptions(cmd: Command): Command {
  cmd.option('-r, --restart', 'restart the VM when it is running so that the change takes effect now');
  return addWaitOptions(cmd, 'the restart');
}

/**
 * After an XML change: with `restart` a running VM is restarted (`changeVmState`), otherwise the
 * user is told that the change applies at the VM's next start.
 */
export async function afterXmlChange(ctx: CliContext, change: XmlChange, o: { restart?: boolean; wait?: boolean; waitTimeout?: string }): Promise<void> {
  const name = change.ref.name;
  if (change.state !== 'start') {
    ctx.output.line(`VM "${name}" is ${change.state || '(no state)'}: the change applies when it next starts${o.restart ? ' (nothing to restart)' : ''}`);
    return;
  }
  if (!o.restart) {
    ctx.output.line(`VM "${name}" is running: the change applies at its next start (or add --restart, or "pvc vm restart ${name}")`);
    return;
  }
  const waitS = waitOf(o);
  ctx.output.line(await changeVmState(ctx, change.ref, 'restart', waitS === undefined ? {} : { waitS }));
}

/** `pvc vm tag|vcpu|memory ...`. */
export function registerVmEdits(group: Command, ctx: CliContext): void {
  registerTag(group, ctx);
  for (const x of XML_SETTINGS) registerXmlSetting(group, ctx, x);
}

function registerTag(group: Command, ctx: CliContext): void {
  const tag = group.command('tag').description('VM tags: add, remove, get');
  tag.command('add <vm> <tag>')
    .description('add a tag to a VM (or change whether it is protected)')
    .option('-p, --protected', 'mark the tag protected: "vm tag remove" then needs --force')
    .action(async (vm: string, name: string, o: { protected?: boolean }) => {
      const { zk } = await ctx.cluster();
      const ref = await findVm(zk, vm);
      const how = await addTag(zk, ref, name, o.protected === true);
      ctx.output.line(`${how === 'added' ? 'Added' : 'Updated'} tag "${name}"${o.protected ? ' (protected)' : ''} on VM "${ref.name}"`);
    });
  tag.command('remove <vm> <tag>')
    .description('remove a tag from a VM (a protected tag needs --force)')
    .option('--force', 'remove the tag even when it is protected')
    .action(async (vm: string, name: string, o: { force?: boolean }) => {
      const { zk } = await ctx.cluster();
      const ref = await findVm(zk, vm);
      await removeTag(zk, ref, name, o.force === true);
      ctx.output.line(`Removed tag "${name}" from VM "${ref.name}"`);
    });
  tag.command('get <vm>')
    .description('show the tags of a VM')
    .addOption(formatOption())
    .action(async (vm: string, o: { format?: string }) => {
      const { zk } = await ctx.cluster();
      const s = await readVmSummary(zk, await findVm(zk, vm));
      if (formatOf(o) === 'json') return ctx.output.json({ name: s.name, uuid: s.uuid, tags: s.tags });
      if (s.tags.length === 0) return ctx.output.line(`VM "${s.name}" has no tags`);
      ctx.output.table(s.tags, [
        { header: 'Tag', value: (t) => t.name },
        { header: 'Type', value: (t) => t.type },
        { header: 'Protected', value: (t) => (t.protected ? 'yes' : 'no') },
      ]);
    });
}

/** One XML setting with `get` and `set` subcommands (`vcpu`, `memory`). */
interface XmlSetting {
  command: string;
  what: string;
  arg: string;
  field: 'vcpus' | 'memoryMiB';
  unit: string;
  set: typeof setVcpus;
}

const XML_SETTINGS: readonly XmlSetting[] = [
  { command: 'vcpu', what: 'the vCPU count', arg: 'count', field: 'vcpus', unit: 'vCPUs', set: setVcpus },
  { command: 'memory', what: 'the memory', arg: 'MiB', field: 'memoryMiB', unit: 'MiB of memory', set: setMemory },
];

function registerXmlSetting(group: Command, ctx: CliContext, x: XmlSetting): void {
  const cmd = group.command(x.command).description(`${x.what} of a VM: get, set`);
  cmd.command('get <vm>')
    .description(`show ${x.what} of a VM${x.field === 'memoryMiB' ? ' in MiB' : ''} (from its XML)`)
    .addOption(formatOption())
    .action(async (vm: string, o: { format?: string }) => {
      const { zk } = await ctx.cluster();
      const s = await readVmSummary(zk, await findVm(zk, vm));
      if (formatOf(o) === 'json') return ctx.output.json({ name: s.name, uuid: s.uuid, [x.field]: s[x.field] });
      ctx.output.line(`${s[x.field] ?? '?'}`);
    });
  addRestartOptions(cmd.command(`set <vm> <${x.arg}>`))
    .summary(`set ${x.what} of a VM${x.field === 'memoryMiB' ? ', MiB' : ''}`)
    .description(`set ${x.what} of a VM in its XML${x.field === 'memoryMiB' ? ', in MiB' : ''}. ${GUARD_HELP}`)
    .action(async (vm: string, value: string, o: { restart?: boolean; wait?: boolean; waitTimeout?: string }) => {
      const n = parsePositiveInt(value, x.field === 'vcpus' ? 'vcpu count' : 'memory MiB');
      const { zk } = await ctx.cluster();
      const change = await x.set(zk, await findVm(zk, vm), n);
      ctx.output.line(`Set VM "${change.ref.name}" to ${n} ${x.unit}`);
      await afterXmlChange(ctx, change, o);
    });
}
