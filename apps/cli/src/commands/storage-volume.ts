import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { showSnapshotList, showVolumeList } from '../ops/storage-show.js';
import { formatOf, formatOption } from './common.js';
import { CARRIED_OUT, changeOptions, confirm, nameArg, runChange, sizeArg, type ChangeOpts } from './storage-common.js';

const GUARD = 'It must be smaller than the free space of the pool and, unless --force, keep the pool under 80 % full (ceph df at the time of the request).';
const SIZE = 'sizes: 10G, 512M, 1.5T (units B K M G T P, 1024-based) or bytes';

type ForceOpts = ChangeOpts & { force?: boolean };

/** `pvc storage volume add|remove|resize|rename|clone|list` and `volume snapshot ...` (the original's places). */
export function registerVolume(group: Command, ctx: CliContext): void {
  const volume = group.command('volume').description('RBD volumes: add, remove, resize, rename, clone, list, snapshot');
  changeOptions(volume.command('add <pool> <name> <size>')
    .summary('add an RBD volume')
    .description(`add RBD volume <name> of <size> in <pool> (rbd create; ${SIZE}). ${GUARD} ${CARRIED_OUT}`)
    .option('--force', 'allow a volume that fills the pool past 80 %'))
    .action(async (pool: string, name: string, size: string, o: ForceOpts) => {
      await runChange(ctx, { op: 'volume.add', pool: nameArg('pool', pool), volume: nameArg('volume', name), sizeBytes: sizeArg(size), force: o.force === true }, o);
    });
  changeOptions(volume.command('remove <pool> <name>')
    .summary('remove an RBD volume with its snapshots (needs --yes)')
    .description(`remove RBD volume <name> of <pool> with all its snapshots (rbd snap purge, rbd rm). Needs --yes. ${CARRIED_OUT}`)
    .option('-y, --yes', 'confirm: the volume and its snapshots are deleted'))
    .action(async (pool: string, name: string, o: ChangeOpts & { yes?: boolean }) => {
      confirm(o, `volume remove deletes volume "${pool}/${name}" with its snapshots`);
      await runChange(ctx, { op: 'volume.remove', pool: nameArg('pool', pool), volume: nameArg('volume', name) }, o);
    });
  changeOptions(volume.command('resize <pool> <name> <size>')
    .summary('resize an RBD volume')
    .description(`resize RBD volume <name> of <pool> to <size> (rbd resize; rbd refuses to shrink; ${SIZE}). The new size is guarded like "add". ${CARRIED_OUT}`)
    .option('--force', 'allow a size that fills the pool past 80 %'))
    .action(async (pool: string, name: string, size: string, o: ForceOpts) => {
      await runChange(ctx, { op: 'volume.resize', pool: nameArg('pool', pool), volume: nameArg('volume', name), sizeBytes: sizeArg(size), force: o.force === true }, o);
    });
  changeOptions(volume.command('rename <pool> <name> <new-name>')
    .summary('rename an RBD volume')
    .description(`rename RBD volume <name> of <pool> to <new-name> (rbd rename); its snapshots go with it. ${CARRIED_OUT}`))
    .action(async (pool: string, name: string, newName: string, o: ChangeOpts) => {
      await runChange(ctx, { op: 'volume.rename', pool: nameArg('pool', pool), volume: nameArg('volume', name), newName: nameArg('volume', newName) }, o);
    });
  changeOptions(volume.command('clone <pool> <name> <new-name>')
    .summary('copy an RBD volume to a new one')
    .description(`copy RBD volume <name> of <pool> to <new-name> in the same pool (rbd copy). The copy's size is guarded like "add". ${CARRIED_OUT}`)
    .option('--force', 'allow a copy that fills the pool past 80 %'))
    .action(async (pool: string, name: string, newName: string, o: ForceOpts) => {
      await runChange(ctx, { op: 'volume.clone', pool: nameArg('pool', pool), volume: nameArg('volume', name), newName: nameArg('volume', newName), force: o.force === true }, o);
    });
  volume.command('list [limit]')
    .description('list the volumes with their size and rbd info; [limit] is a regex on the name')
    .option('-p, --pool <pool>', 'only the volumes of this pool')
    .addOption(formatOption())
    .action(async (limit: string | undefined, o: { pool?: string; format?: string }) => {
      await showVolumeList(ctx, limit, o.pool === undefined ? undefined : nameArg('pool', o.pool), formatOf(o));
    });
  registerSnapshot(volume, ctx);
}

/**
 * `snapshot add|remove|rollback|list` under `parent`: `pvc storage volume snapshot …` (the original's
 * place) and `pvc storage snapshot …` (the same commands, shorter).
 */
export function registerSnapshot(parent: Command, ctx: CliContext): void {
  const snapshot = parent.command('snapshot').description('RBD snapshots of a volume: add, remove, rollback, list');
  const args = (pool: string, vol: string, name: string) => ({ pool: nameArg('pool', pool), volume: nameArg('volume', vol), snapshot: nameArg('snapshot', name) });
  changeOptions(snapshot.command('add <pool> <volume> <name>')
    .summary('take a snapshot of an RBD volume')
    .description(`take snapshot <name> of volume <volume> in <pool> (rbd snap create). ${CARRIED_OUT}`))
    .action(async (pool: string, vol: string, name: string, o: ChangeOpts) => {
      await runChange(ctx, { op: 'snapshot.add', ...args(pool, vol, name) }, o);
    });
  changeOptions(snapshot.command('remove <pool> <volume> <name>')
    .summary('remove a snapshot (needs --yes)')
    .description(`remove snapshot <name> of volume <volume> in <pool> (rbd snap rm). Needs --yes. ${CARRIED_OUT}`)
    .option('-y, --yes', 'confirm: the snapshot is deleted'))
    .action(async (pool: string, vol: string, name: string, o: ChangeOpts & { yes?: boolean }) => {
      confirm(o, `snapshot remove deletes snapshot "${pool}/${vol}@${name}"`);
      await runChange(ctx, { op: 'snapshot.remove', ...args(pool, vol, name) }, o);
    });
  changeOptions(snapshot.command('rollback <pool> <volume> <name>')
    .summary('roll a volume back to a snapshot (needs --yes)')
    .description(`roll volume <volume> in <pool> back to snapshot <name> (rbd snap rollback): what was written since is lost. Stop the VM using it first. Needs --yes. ${CARRIED_OUT}`)
    .option('-y, --yes', 'confirm: the volume loses what was written since the snapshot'))
    .action(async (pool: string, vol: string, name: string, o: ChangeOpts & { yes?: boolean }) => {
      confirm(o, `snapshot rollback overwrites volume "${pool}/${vol}" with snapshot "${name}"`);
      await runChange(ctx, { op: 'snapshot.rollback', ...args(pool, vol, name) }, o);
    });
  snapshot.command('list [limit]')
    .description('list the snapshots; [limit] is a regex on the name')
    .option('-p, --pool <pool>', 'only the snapshots of volumes in this pool')
    .option('-o, --volume <volume>', 'only the snapshots of this volume')
    .addOption(formatOption())
    .action(async (limit: string | undefined, o: { pool?: string; volume?: string; format?: string }) => {
      const where = { ...(o.pool !== undefined ? { pool: nameArg('pool', o.pool) } : {}), ...(o.volume !== undefined ? { volume: nameArg('volume', o.volume) } : {}) };
      await showSnapshotList(ctx, limit, where, formatOf(o));
    });
}
