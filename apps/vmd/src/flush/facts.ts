import type { NodeFacts } from '@pvc/placement';
import type { Logger } from '@pvc/runtime';
import { codec, paths, type ZkClient } from '@pvc/zk';
import { xmlMemoryMiB } from '../domain-xml.js';
import type { FlushVm } from './plan.js';

const NUMERIC = ['memTotal', 'memUsed', 'memFree', 'memAlloc', 'memProv', 'vcpuAlloc', 'cpuLoad', 'domainsCount'] as const;

/** A number from ZK, or 0 (logged) when the value is not one: bad data never stops a flush. */
function num(logger: Logger, key: string, raw: string | undefined): number {
  if (raw === undefined || raw === '') return 0;
  const r = codec.safeDecode(codec.float, raw, key);
  if (r.ok) return r.value;
  logger.warn({ key, value: raw.slice(0, 40) }, 'not a number in ZK; using 0');
  return 0;
}

/**
 * The placement facts of every node under `/nodes` (the keys keepaliled's fence recovery reads,
 * `apps/keepaliled/src/fence/cluster-view.ts`; copied here because apps may not import apps).
 */
export async function readNodeFacts(zk: ZkClient, logger: Logger): Promise<NodeFacts[]> {
  const names = (await zk.children(paths.nodes)).sort();
  const facts = await Promise.all(names.map(async (name): Promise<NodeFacts> => {
    const k = paths.node(name);
    const [daemonState, domainState, staticData, ...nums] = await Promise.all(
      [k.daemonState, k.domainState, k.staticData, ...NUMERIC.map((n) => k[n])].map((p) => zk.read(p)),
    );
    const n = Object.fromEntries(NUMERIC.map((key, i) => [key, num(logger, k[key], nums[i])])) as Record<(typeof NUMERIC)[number], number>;
    const stat = codec.safeDecode(codec.staticData, staticData ?? '', k.staticData);
    return {
      name, daemonState: daemonState ?? '', domainState: domainState ?? '',
      memTotalMiB: n.memTotal, memUsedMiB: n.memUsed, memFreeMiB: n.memFree, memAllocMiB: n.memAlloc,
      memProvMiB: n.memProv, vcpuAlloc: n.vcpuAlloc, cpuLoad: n.cpuLoad, domainsCount: n.domainsCount,
      ...(stat.ok ? { staticCpus: stat.value.cpuCount } : {}),
    };
  }));
  return facts;
}

function vcpusOf(xml: string): number {
  const m = /<vcpu[^>]*>\s*(\d+)\s*<\/vcpu>/.exec(xml);
  return m ? Number(m[1]) : 1;
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
      return await readVm(zk, uuid, self, active, extra);
    } catch (err) {
      logger.warn({ uuid, err: String(err) }, 'cannot read a VM for the flush; skipped this step');
      return undefined;
    }
  }));
  return vms.filter((v): v is FlushVm => v !== undefined);
}

async function readVm(zk: ZkClient, uuid: string, self: string, active: ReadonlySet<string>, extra: ReadonlySet<string>): Promise<FlushVm | undefined> {
  const p = paths.domain(uuid);
  const [node, lastNode] = await Promise.all([zk.read(p.node), zk.read(p.lastNode)]);
  if (node === undefined) return undefined;
  if (node !== self && lastNode !== self && !active.has(uuid) && !extra.has(uuid)) return undefined;
  const keys = [p.root, p.state, p.xml, p.nodeSelector, p.nodeLimit, p.nodeAutostart, p.migrationMethod, p.failedReason];
  const [name, state, xml, selector, limit, autostart, method, failed] = await Promise.all(keys.map((k) => zk.read(k)));
  return {
    uuid, name: name ?? uuid, state: state ?? '', node, lastNode: lastNode ?? '', runningHere: active.has(uuid),
    memoryMiB: Math.max(1, xmlMemoryMiB(xml ?? '') ?? 1), vcpus: vcpusOf(xml ?? ''),
    selector: selector ?? '', nodeLimit: (limit ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '' && s !== 'None'),
    autostart: autostart === 'True', method: (method ?? '').toLowerCase(), failedReason: failed ?? '',
  };
}
