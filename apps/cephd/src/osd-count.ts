/**
 * Which OSDs live on a node: the children of `/ceph/osds` whose `node` key names it.
 */
import { describeError, type Logger } from '@pvc/runtime';
import { isZkError, osdKeys, paths, readKey, type KeySpec, type ZkClient } from '@pvc/zk';

/** Reads `/ceph/osds/*\/node` (through the key table) and counts those equal to `node`. Throws when Zookeeper fails. */
export async function countLocalOsds(zk: ZkClient, node: string, timeoutMs: number, logger: Logger): Promise<number> {
  return (await osdIdsOf(zk, node, timeoutMs, logger)).length;
}

/** The ids of the OSDs whose `/ceph/osds/<id>/node` is `node`, in ZK's order. Throws when Zookeeper fails. */
export async function osdIdsOf(zk: ZkClient, node: string, timeoutMs: number, logger: Logger): Promise<string[]> {
  let ids: string[];
  try {
    ids = await zk.children(paths.ceph.osds, { timeoutMs });
  } catch (err) {
    if (isZkError(err, 'NO_NODE')) return [];
    throw err;
  }
  const owners = await Promise.all(
    ids.map(async (id) => {
      let spec: KeySpec<string>;
      try {
        spec = osdKeys(id).node;
      } catch (err) {
        logger.warn({ osd: id, err: describeError(err) }, 'ignoring a malformed OSD entry');
        return undefined;
      }
      return readKey(zk, spec, { timeoutMs, logger });
    }),
  );
  return ids.filter((_, i) => owners[i] === node);
}
