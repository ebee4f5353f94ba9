import type { Logger } from '@pvc/runtime';
import { domainKeys, paths, readKey, readVmFacts, type VmFacts, type ZkClient } from '@pvc/zk';

/**
 * The VMs a fencer recovers, read through `@pvc/zk`'s shared readers (the same reading of a VM's
 * keys and XML size as vmd's flush and the CLI's migrate). Nodes are read with `readNodeRecord` /
 * `readAllNodeFigures` of `@pvc/zk` directly.
 *
 * @module
 */

/**
 * Every VM whose `node` is `node`, sorted by UUID. A VM deleted between the listing and the read
 * is left out; an unreadable XML size is logged by `readVmFacts` and placed as 1 MiB.
 */
export async function readDomainsOn(zk: ZkClient, logger: Logger, node: string): Promise<VmFacts[]> {
  const uuids = (await zk.children(paths.domains)).sort();
  // In parallel: recovery time grows with the number of VMs in the cluster, not with round trips.
  const records = await Promise.all(uuids.map((uuid) => readDomainIf(zk, logger, uuid, node)));
  return records.filter((r): r is VmFacts => r !== undefined);
}

async function readDomainIf(zk: ZkClient, logger: Logger, uuid: string, node: string): Promise<VmFacts | undefined> {
  // `node` first: most VMs of a cluster are on other nodes, and only these need the full read.
  if ((await readKey(zk, domainKeys(uuid).node, { logger })) !== node) return undefined;
  const vm = await readVmFacts(zk, uuid, logger);
  return vm?.node === node ? vm : undefined;
}
