import type { NodeFacts } from '@pvc/placement';
import type { Logger } from '@pvc/runtime';
import { paths, readAllNodeFigures, type ZkClient } from '@pvc/zk';
import { xmlMemoryMiB } from '../domain-xml.js';
import type { FlushVm } from './plan.js';

/** The placement facts of every node under `/nodes` (shared reader in `@pvc/zk`). */
export function readNodeFacts(zk: ZkClient, logger: Logger): Promise<NodeFacts[]> {
  return readAllNodeFigures(zk, logger);
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
