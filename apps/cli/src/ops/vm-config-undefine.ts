import { domainKeys, pair } from '@pvc/zk';
import type { CliContext } from '../context.js';
import type { VmRef } from '../lookup.js';
import { waitUntil } from '../wait.js';
import { changeVmState } from './vm-state.js';
import { describeStatus, readVmStatus } from './vm-status.js';

/**
 * `vm undefine` (the original's `remove_vm` without disks): a VM that is not `stop` is set to
 * `stop` (unconditionally, as the original does: `force` also passes a `mirror` VM), then we wait
 * until it is stopped — state `stop` and its UUID in no node's `runningdomains` (vmd destroys it
 * and removes it) — at most `waitS` seconds (exit 4 after, nothing deleted). Then `state` =
 * `delete` and `/domains/<uuid>` is deleted with everything under it. Returns the steps taken, one
 * line each.
 */
export async function undefineVm(ctx: CliContext, ref: VmRef, waitS: number): Promise<string[]> {
  const { zk } = await ctx.cluster();
  const steps: string[] = [];
  const before = await readVmStatus(zk, ref);
  if (before.state !== 'stop') {
    steps.push(await changeVmState(ctx, ref, 'stop', { force: true, waitS }));
  } else if (before.runningOn.length > 0) {
    await waitUntil(ctx, `VM "${ref.name}" stopping before undefine`, waitS, async () => {
      const s = await readVmStatus(zk, ref);
      if (s.state !== 'stop') return { done: false, failed: `its state changed to ${s.state}`, progress: describeStatus(s) };
      return { done: s.runningOn.length === 0, progress: describeStatus(s) };
    });
    steps.push(`VM "${ref.name}" is no longer listed running on ${before.runningOn.join(', ')}`);
  }
  const d = domainKeys(ref.uuid);
  await zk.write([pair(d.state, 'delete')]);
  await zk.delete(d.root.path);
  steps.push(`Undefined VM "${ref.name}" (${ref.uuid})`);
  return steps;
}
