import type { NodeFacts } from '@pvc/placement';
import type { Logger } from '@pvc/runtime';
import { domainKeys, paths, readAllNodeFigures, readKeys, readVmFacts, type ZkClient } from '@pvc/zk';
import type { FlushVm } from './plan.js';

/** The placement facts of every node under `/nodes`, with their `networks_up` (shared reader in `@pvc/zk`). */
export function readNodeFacts(zk: ZkClient, logger: Logger): Promise<NodeFacts[]> {
  return readAllNodeFigures(zk, logger);
}

/**
 * Every VM a flush or unflush of `self` may touch: assigned here, running here (`active`), whose
 * lastnode is here, or named in `extra` (moves in flight or failed). A VM deleted meanwhile is
 * left out; one whose keys cannot be read is left out and logged (the next step tries again).
 */
export async function readFlushVms(zk: ZkClient, logger: Logger, self: string, active: ReadonlySet<string>, extra: ReadonlySet<string>): Promise<FlushVm[]> {
  const uuids = await zk.children(paths.domains);
  const vms = await Promise.all(uuids.map(async (uuid) => {
    try {
      return await readVm(zk, logger, uuid, self, active, extra);
    } catch (err) {
      logger.warn({ uuid, err: String(err) }, 'cannot read a VM for the flush; skipped this step');
      return undefined;
    }
  }));
  return vms.filter((v): v is FlushVm => v !== undefined);
}

async function readVm(zk: ZkClient, logger: Logger, uuid: string, self: string, active: ReadonlySet<string>, extra: ReadonlySet<string>): Promise<FlushVm | undefined> {
  // node/lastnode first: every step reads every VM, and most concern other nodes.
  const k = domainKeys(uuid);
  const [node, lastNode] = await readKeys(zk, [k.node, k.lastNode], { logger });
  if (node !== self && lastNode !== self && !active.has(uuid) && !extra.has(uuid)) return undefined;
  const vm = await readVmFacts(zk, uuid, logger);
  if (vm === undefined) return undefined;
  return {
    uuid, name: vm.name, state: vm.state ?? '', node: vm.node, lastNode: vm.lastNode, runningHere: active.has(uuid),
    memoryMiB: vm.memoryMiB, vcpus: vm.vcpus, selector: vm.selector, nodeLimit: vm.nodeLimit,
    autostart: vm.autostart, method: vm.migrationMethod, failedReason: vm.failedReason, networks: vm.networks,
  };
}
