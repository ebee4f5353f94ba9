/**
 * Reads the facts the fault conditions need (`conditions.ts`), every value through its key's
 * codec: a bad value is logged by `@pvc/zk` (once per key and value) and read as the key's
 * default, so one bad key never stops a pass.
 *
 * @module
 */
import type { Logger } from '@pvc/runtime';
import { describeError, mapLimit } from '@pvc/runtime';
import { cephKeys, domainKeys, isZkError, nodeKeys, osdKeys, paths, pluginKeys, readKey, readKeys, type ZkClient } from '@pvc/zk';
import { isNoTargetReason } from '../fence/rules.js';
import type { CephCheckFact, ClusterFacts, NodeFact, OsdFact, PluginFact, VmFact } from './conditions.js';

/** Options of the reads: the pass's signal, and the logger bad values are reported to. */
export interface FactReadOptions {
  signal?: AbortSignal;
  logger: Logger;
}

/** How many objects are read at once: a pass never floods the session the keepalive shares. */
export const READ_CONCURRENCY = 8;

/** Reads every node, VM and storage fact of the cluster. */
export async function readClusterFacts(zk: ZkClient, opts: FactReadOptions): Promise<ClusterFacts> {
  const o = signalOnly(opts);
  const [nodeNames, uuids, osdIds] = await Promise.all([
    zk.children(paths.nodes, o),
    zk.children(paths.domains, o),
    zk.children(paths.ceph.osds, o).catch((err: unknown) => {
      if (isZkError(err, 'NO_NODE')) return [];
      throw err;
    }),
  ]);
  const nodes = await mapLimit(nodeNames.sort(), READ_CONCURRENCY, (n) => readNodeFact(zk, n, opts));
  const vms = await mapLimit(uuids.sort(), READ_CONCURRENCY, (u) => readVmFact(zk, u, opts));
  const osds = await mapLimit(osdIds.sort(), READ_CONCURRENCY, (id) => readOsdFact(zk, id, opts));
  const cephChecks = await readCephChecks(zk, opts);
  return { nodes, vms: vms.filter((v): v is VmFact => v !== undefined), osds: osds.filter((x): x is OsdFact => x !== undefined), cephChecks };
}

/**
 * An OSD's `in`, from its stats (the `osdStatsJson` codec; a bad value is logged and read as
 * absent). Only a number counts: absent, `"|"` placeholders and the like are unknown.
 */
async function readOsdFact(zk: ZkClient, id: string, opts: FactReadOptions): Promise<OsdFact | undefined> {
  let spec: ReturnType<typeof osdKeys>['stats'];
  try {
    spec = osdKeys(id).stats;
  } catch (err) {
    opts.logger.warn({ osd: id, err: describeError(err) }, 'ignoring a malformed OSD entry');
    return undefined;
  }
  const stats = await readKey(zk, spec, opts);
  const placeholder = stats?.uuid === '|';
  return { id, in: !placeholder && typeof stats?.in === 'number' ? stats.in : undefined };
}

/** The checks of `/ceph/health` (its codec; absent or bad = none). */
async function readCephChecks(zk: ZkClient, opts: FactReadOptions): Promise<CephCheckFact[]> {
  const health = await readKey(zk, cephKeys.health, opts);
  return Object.entries(health?.checks ?? {}).map(([name, c]) => ({ name, severity: c.severity, message: c.summary.message }));
}

async function readNodeFact(zk: ZkClient, name: string, opts: FactReadOptions): Promise<NodeFact> {
  const k = nodeKeys(name);
  const [daemonState, memTotal, memAlloc, pluginNames] = await readKeys(zk, [k.daemonState, k.memTotal, k.memAlloc, k.monitoringPlugins], opts);
  const plugins: PluginFact[] = [];
  for (const plugin of pluginNames) {
    const fact = await readPluginFact(zk, name, plugin, opts);
    if (fact) plugins.push(fact);
  }
  return { name, daemonState, memTotalMiB: memTotal, memAllocMiB: memAlloc, plugins };
}

async function readPluginFact(zk: ZkClient, node: string, plugin: string, opts: FactReadOptions): Promise<PluginFact | undefined> {
  let p: ReturnType<typeof pluginKeys>;
  try {
    p = pluginKeys(node, plugin);
  } catch (err) {
    // A name that cannot be a path segment (e.g. holds "/"): no such plugin key can exist.
    opts.logger.warn({ node, plugin, err: describeError(err) }, 'monitoring_plugins lists a name that is not a plugin key; skipped');
    return undefined;
  }
  const [delta, message] = await readKeys(zk, [p.healthDelta, p.message], opts);
  return { name: plugin, delta, message };
}

/**
 * A VM's fault facts, read only as far as a row can hold: the state; for a failed VM its name and
 * reason; for a stopped one its reason, and only when that is recovery's no-target reason its name
 * and `node_autostart`. One read for a running VM, two for most stopped ones.
 */
async function readVmFact(zk: ZkClient, uuid: string, opts: FactReadOptions): Promise<VmFact | undefined> {
  const d = domainKeys(uuid);
  const [state] = await readKeys(zk, [d.state], opts);
  const bare = { uuid, name: uuid, state, failedReason: '', nodeAutostart: false };
  if (state === 'fail') {
    const [name, failedReason] = await readKeys(zk, [d.root, d.failedReason], opts);
    return { ...bare, name, failedReason };
  }
  if (state !== 'stop') return bare;
  const [failedReason] = await readKeys(zk, [d.failedReason], opts);
  if (!isNoTargetReason(failedReason)) return bare;
  const [name, nodeAutostart] = await readKeys(zk, [d.root, d.nodeAutostart], opts);
  return { ...bare, name, failedReason, nodeAutostart };
}

function signalOnly(opts: FactReadOptions): { signal?: AbortSignal } {
  return opts.signal ? { signal: opts.signal } : {};
}
