import { readClientNetworks } from '@pvc/zk';
import type { CliContext } from '../context.js';
import { readStore } from '../connection.js';
import { listNodes, listVmRefs } from '../lookup.js';
import { faultIds } from '../ops/faults.js';
import type { Completion, DynamicSource } from './candidates.js';

/** Seconds completion waits for Zookeeper: a prompt must not hang. */
export const COMPLETION_ZK_TIMEOUT_S = 2;

/**
 * Names of VMs, nodes, faults or networks (VNIs and descriptions) (from the cluster, through `-c`/`--zk` given on the line or the usual
 * connection) or of stored connections. Any failure (no cluster, unreachable, malformed store)
 * gives no names: completion never prints an error.
 */
export async function dynamicNames(ctx: CliContext, source: DynamicSource, line: Pick<Completion, 'connection' | 'zk'>): Promise<string[]> {
  try {
    if (source === 'connection') return Object.keys((await readStore(ctx.io.env)).clusters).sort();
    ctx.setFlags({
      ...(line.connection !== undefined ? { connection: line.connection } : {}),
      ...(line.zk !== undefined ? { zk: line.zk } : {}),
      zkTimeout: String(COMPLETION_ZK_TIMEOUT_S),
      color: false,
    });
    const { zk } = await ctx.cluster();
    if (source === 'vm') return (await listVmRefs(zk)).map((r) => r.name).filter((n) => n !== '');
    if (source === 'fault') return await faultIds(zk);
    if (source === 'network') return (await readClientNetworks(zk)).networks.flatMap((n) => [String(n.vni), n.description]);
    return await listNodes(zk);
  } catch {
    return [];
  }
}
