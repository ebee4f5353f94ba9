/**
 * How many OSDs live on this node: the children of `/ceph/osds` whose `node` key names us.
 */
import { describeError, type Logger } from '@pvc/runtime';
import { isZkError, osdKeys, paths, readKey, type KeySpec, type ZkClient } from '@pvc/zk';

/** Reads `/ceph/osds/*\/node` (through the key table) and counts those equal to `node`. Throws when Zookeeper fails. */
export async function countLocalOsds(zk: ZkClient, node: string, timeoutMs: number, logger: Logger): Promise<number> {
  let ids: string[];
  try {
    ids = await zk.children(paths.ceph.osds, { timeoutMs });
  } catch (err) {
    if (isZkError(err, 'NO_NODE')) return 0;
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
  return owners.filter((o) => o === node).length;
}
