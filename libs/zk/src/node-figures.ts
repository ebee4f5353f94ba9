import type { Logger } from '@pvc/runtime';
import { float, safeDecode, staticData } from './codec.js';
import { paths } from './schema.js';
import type { ZkClient } from './types.js';

/**
 * The figures of one node that target selection reads (`/nodes/<name>/...`, MiB as numbers); the
 * same shape as `@pvc/placement`'s `NodeFacts`. State text is kept raw: ZK may hold anything.
 */
export interface NodeFigures {
  name: string;
  daemonState: string;
  domainState: string;
  memTotalMiB: number;
  memUsedMiB: number;
  memFreeMiB: number;
  memAllocMiB: number;
  memProvMiB: number;
  vcpuAlloc: number;
  cpuLoad: number;
  domainsCount: number;
  /** CPU count from `staticdata`, when it parses. */
  staticCpus?: number;
}

const NUMERIC = ['memTotal', 'memUsed', 'memFree', 'memAlloc', 'memProv', 'vcpuAlloc', 'cpuLoad', 'domainsCount'] as const;

/** A number from ZK, or 0 (logged with its key) when it is not one: bad data never stops a caller. */
function num(logger: Logger | undefined, key: string, raw: string | undefined): number {
  if (raw === undefined || raw === '') return 0;
  const r = safeDecode(float, raw, key);
  if (r.ok) return r.value;
  logger?.warn({ key, value: raw.slice(0, 40) }, 'not a number in ZK; using 0');
  return 0;
}

/** Reads one node's figures (absent keys read as "" / 0). */
export async function readNodeFigures(zk: ZkClient, name: string, logger?: Logger): Promise<NodeFigures> {
  const k = paths.node(name);
  const [daemonState, domainState, stat, ...nums] = await Promise.all(
    [k.daemonState, k.domainState, k.staticData, ...NUMERIC.map((n) => k[n])].map((p) => zk.read(p)),
  );
  const n = Object.fromEntries(NUMERIC.map((key, i) => [key, num(logger, k[key], nums[i])])) as Record<(typeof NUMERIC)[number], number>;
  const cpus = safeDecode(staticData, stat ?? '', k.staticData);
  return {
    name, daemonState: daemonState ?? '', domainState: domainState ?? '',
    memTotalMiB: n.memTotal, memUsedMiB: n.memUsed, memFreeMiB: n.memFree, memAllocMiB: n.memAlloc,
    memProvMiB: n.memProv, vcpuAlloc: n.vcpuAlloc, cpuLoad: n.cpuLoad, domainsCount: n.domainsCount,
    ...(cpus.ok ? { staticCpus: cpus.value.cpuCount } : {}),
  };
}

/** The figures of every node under `/nodes`, sorted by name. */
export async function readAllNodeFigures(zk: ZkClient, logger?: Logger): Promise<NodeFigures[]> {
  const names = (await zk.children(paths.nodes)).sort();
  return Promise.all(names.map((name) => readNodeFigures(zk, name, logger)));
}
