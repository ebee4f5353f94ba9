import type { NodeFacts } from '@pvc/placement';
import type { Logger } from '@pvc/runtime';
import { domainKeys, paths, readAllNodeFigures, readKeys, readVmFacts, type VmFacts, type ZkClient } from '@pvc/zk';
import type { FlushKind, FlushVm } from './plan.js';

/** The placement facts of every node under `/nodes`, with their `networks_up` (shared reader in `@pvc/zk`). */
export function readNodeFacts(zk: ZkClient, logger: Logger): Promise<NodeFacts[]> {
  return readAllNodeFigures(zk, logger);
}

/** How often a flush run reads every VM's `node`/`lastnode` again, ms (between scans only new VMs are). */
export const FLUSH_RESCAN_MS = 10_000;

/**
 * How long a flush run reuses a VM's configuration — its name, the XML's sizes and networks,
 * node_selector, node_limit, node_autostart, migration_method, rbdlist — ms. Its `state`, `node`,
 * `lastnode` and `failedreason` are read at every step. A step comes with every change of a VM it
 * moves (several a second), and the configuration was 7 of the 11 keys read per VM and step; the
 * node figures are reused for as long (see the flusher).
 */
export const VM_CONFIG_MAX_AGE_MS = 1_000;

/** One step's VMs, and whether they come from a scan of every VM (needed before a run may finish). */
export interface FlushVmsRead {
  readonly vms: FlushVm[];
  readonly full: boolean;
}

/**
 * Which VMs a flush or unflush of `self` reads each step: those assigned here, running here
 * (`active`), named in `extra` (moves in flight or failed), and for an unflush those whose
 * lastnode is here (the ones to bring back; a flush has no use for the VMs it already moved).
 * Finding the first and last kind means reading `node`/`lastnode` of every VM in the cluster, so that
 * scan is done at a run's first step, every {@link FLUSH_RESCAN_MS} and when asked (before a run
 * may finish); the steps between read only the VMs found then, new VMs, and `active`/`extra`. A
 * VM is assigned here or given this lastnode during a run only by the run itself (its moves are in
 * `extra`) or by a user's move, which the next scan finds. A VM deleted meanwhile is left out; one
 * whose keys cannot be read is left out and logged (the next step tries again). A VM's
 * configuration is reused for {@link VM_CONFIG_MAX_AGE_MS}.
 */
export class FlushScope {
  private readonly candidates = new Set<string>();
  private seen = new Set<string>();
  private scannedAtMs: number | undefined;
  /** Each VM's facts as last read whole, and when. */
  private readonly configs = new Map<string, { atMs: number; facts: VmFacts }>();

  constructor(private readonly deps: { zk: ZkClient; logger: Logger; self: string; kind: FlushKind; rescanMs?: number }) {}

  /** Whether a VM with these keys is read by the steps of this run (besides `active`/`extra`). */
  private concerns(node: string | undefined, lastNode: string | undefined): boolean {
    return node === this.deps.self || (this.deps.kind === 'unflush' && lastNode === this.deps.self);
  }

  async read(active: ReadonlySet<string>, extra: ReadonlySet<string>, nowMs: number, forceScan: boolean): Promise<FlushVmsRead> {
    const { zk, logger } = this.deps;
    const uuids = await zk.children(paths.domains);
    const full = forceScan || this.scannedAtMs === undefined || nowMs - this.scannedAtMs >= (this.deps.rescanMs ?? FLUSH_RESCAN_MS);
    const toScan = full ? uuids : uuids.filter((u) => !this.seen.has(u));
    if (full) this.candidates.clear();
    // A VM whose keys cannot be read stays unseen: the next step scans it again, and a scan with
    // such a VM does not count as full (a run does not finish on it).
    const unread = new Set<string>();
    await Promise.all(toScan.map(async (uuid) => {
      const k = domainKeys(uuid);
      try {
        const [node, lastNode] = await readKeys(zk, [k.node, k.lastNode], { logger });
        if (this.concerns(node, lastNode)) this.candidates.add(uuid);
      } catch (err) {
        unread.add(uuid);
        logger.warn({ uuid, err: String(err) }, 'cannot read a VM for the flush; skipped this step');
      }
    }));
    this.seen = new Set(uuids.filter((u) => !unread.has(u)));
    const complete = full && unread.size === 0;
    if (complete) this.scannedAtMs = nowMs;
    const wanted = (u: string): boolean => this.candidates.has(u) || active.has(u) || extra.has(u);
    for (const uuid of this.configs.keys()) if (!wanted(uuid)) this.configs.delete(uuid);
    const vms = await Promise.all(uuids.filter(wanted).map(async (uuid) => {
      try {
        const facts = await this.readFacts(uuid, nowMs);
        const vm = facts && flushVm(facts, active);
        if (vm !== undefined && !this.concerns(vm.node, vm.lastNode)) this.candidates.delete(uuid);
        return vm !== undefined && wanted(uuid) ? vm : undefined;
      } catch (err) {
        logger.warn({ uuid, err: String(err) }, 'cannot read a VM for the flush; skipped this step');
        return undefined;
      }
    }));
    return { vms: vms.filter((v): v is FlushVm => v !== undefined), full: complete };
  }

  /** A VM's facts: whole, or its configuration as read less than {@link VM_CONFIG_MAX_AGE_MS} ago and the rest now. */
  private async readFacts(uuid: string, nowMs: number): Promise<VmFacts | undefined> {
    const { zk, logger } = this.deps;
    const cached = this.configs.get(uuid);
    if (cached && nowMs - cached.atMs < VM_CONFIG_MAX_AGE_MS) {
      const k = domainKeys(uuid);
      const [state, node, lastNode, failedReason] = await readKeys(zk, [k.state, k.node, k.lastNode, k.failedReason], { logger });
      return { ...cached.facts, state, node, lastNode, failedReason };
    }
    const facts = await readVmFacts(zk, uuid, logger);
    if (facts === undefined) this.configs.delete(uuid);
    else this.configs.set(uuid, { atMs: nowMs, facts });
    return facts;
  }
}

function flushVm(vm: VmFacts, active: ReadonlySet<string>): FlushVm {
  const { uuid } = vm;
  return {
    uuid, name: vm.name, state: vm.state ?? '', node: vm.node, lastNode: vm.lastNode, runningHere: active.has(uuid),
    memoryMiB: vm.memoryMiB, vcpus: vm.vcpus, selector: vm.selector, nodeLimit: vm.nodeLimit,
    autostart: vm.autostart, method: vm.migrationMethod, failedReason: vm.failedReason, networks: vm.networks,
  };
}
