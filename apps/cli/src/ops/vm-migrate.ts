import { selectTarget, type NodeFacts } from '@pvc/placement';
import {
  clusterKeys, domainKeys, domainXmlFacts, pair, readAllNodeFigures, readKeys, type Selector, type VmSelector, type VmState, type WritePair,
  type ZkClient,
} from '@pvc/zk';
import type { CliContext } from '../context.js';
import { refused } from '../errors.js';
import { findNode, type VmRef } from '../lookup.js';
import { waitUntil, type WaitStep } from '../wait.js';
import { describeStatus, LOCK_TIMEOUT_S, readVmStatus, withStateLock, type VmStatus } from './vm-status.js';

/** `pvc vm migrate|move|unmigrate`. */
export type MigrateAction = 'migrate' | 'move' | 'unmigrate';

/** Options of a migration command. */
export interface MigrateOptions {
  /** Explicit target (migrate, move); otherwise the placement selector picks one. */
  target?: string;
  /** migrate: allow an already migrated VM (keeps its original lastnode). */
  force?: boolean;
  /** migrate: `migrate-live` (no shutdown fallback). */
  forceLive?: boolean;
  waitS?: number;
}

/** The keys one migration command writes (in one transaction), and what it means. */
export interface MigratePlan {
  state: VmState;
  node: string;
  lastNode: string;
  /** True when the VM runs and the node daemons will move it (state migrate*). */
  live: boolean;
}

/** The VM's keys a plan is made from. */
export interface MigrateFacts {
  name: string;
  /** `''` = empty or unreadable. */
  state: VmState | '';
  node: string;
  lastNode: string;
}

/**
 * The keys of migrate/move/unmigrate, as vmd expects them (docs/vmd.md "Migration"): state
 * `migrate` (`migrate-live` when forced live) only if the VM is `start`, else its state is kept
 * (offline reassignment); migrate sets lastnode = current node (already migrated → refused unless
 * forced, which keeps the original lastnode); move clears lastnode; unmigrate returns to lastnode.
 * `target` is already checked to exist and differ from the current node (except for the move
 * that only clears lastnode). Throws a refusal.
 */
export function planMigration(vm: MigrateFacts, action: MigrateAction, target: string, o: { force?: boolean; forceLive?: boolean }): MigratePlan {
  const live = vm.state === 'start';
  if (vm.state === '') throw refused(`cannot ${action} VM "${vm.name}": its state is empty or unreadable (set one first, e.g. "pvc vm stop")`);
  const state = live ? (action === 'migrate' && o.forceLive ? 'migrate-live' : 'migrate') : vm.state;
  if (action === 'unmigrate') return { state, node: target, lastNode: '', live };
  if (action === 'move') return { state, node: target, lastNode: '', live };
  if (vm.lastNode !== '' && !o.force) throw alreadyMigrated(vm);
  if (vm.lastNode === target) {
    throw refused(`cannot migrate VM "${vm.name}" to ${target}: that is the node it was migrated from; use "pvc vm unmigrate"`);
  }
  return { state, node: target, lastNode: vm.lastNode !== '' ? vm.lastNode : vm.node, live };
}

function alreadyMigrated(vm: MigrateFacts): Error {
  return refused(`VM "${vm.name}" is already migrated (from ${vm.lastNode}): use "pvc vm unmigrate", or --force to migrate it again`);
}

/** What the target check reads besides the VM's status. */
interface VmPlacementFacts {
  memoryMiB: number;
  vcpus: number;
  selector: VmSelector;
  nodeLimit: string[];
  clusterSelector: Selector;
  nodes: NodeFacts[];
  /** VNIs of the VM's `vmbr<vni>` bridges: a target known to lack one is refused. */
  networks: number[];
}

/**
 * The VM's size (from its stored XML, read as vmd and keepaliled read it: `domainXmlFacts`), its
 * selector and node limit, the cluster's selector and every node's figures. A VM whose memory
 * size cannot be read from its XML is refused rather than placed by a guess.
 */
async function readPlacementFacts(zk: ZkClient, ref: VmRef): Promise<VmPlacementFacts> {
  const d = domainKeys(ref.uuid);
  const [xml, selector, nodeLimit, clusterSelector] = await readKeys(zk, [d.xml, d.nodeSelector, d.nodeLimit, clusterKeys.migrationTargetSelector]);
  const size = domainXmlFacts(xml);
  if (size.memoryMiB === undefined) {
    throw refused(`cannot place VM "${ref.name}": its stored XML (${d.xml.path}) has no readable <memory>`);
  }
  return { memoryMiB: size.memoryMiB, vcpus: size.vcpus ?? 1, selector, nodeLimit, clusterSelector, nodes: await readAllNodeFigures(zk), networks: size.networks };
}

/**
 * The target node: an explicit one must exist, differ from the current node and be eligible
 * (daemon `run`, domain `ready`, inside node_limit, the VM's networks up there when its
 * `networks_up` is known, the VM fits); without one the selector picks
 * among the eligible nodes other than the current one.
 */
async function chooseTarget(zk: ZkClient, ref: VmRef, action: MigrateAction, current: string, wanted: string | undefined): Promise<string> {
  if (wanted !== undefined) await findNode(zk, wanted);
  if (wanted !== undefined && wanted === current) throw refused(`VM "${ref.name}" is already on ${current}`);
  const f = await readPlacementFacts(zk, ref);
  const nodes = wanted === undefined ? f.nodes : f.nodes.filter((n) => n.name === wanted);
  const r = selectTarget({
    vm: { name: ref.name, memoryMiB: f.memoryMiB, vcpus: f.vcpus, currentNode: current, selector: f.selector, nodeLimit: f.nodeLimit, networks: f.networks },
    nodes,
    clusterSelector: f.clusterSelector,
  });
  if (r.ok) return r.node;
  if (r.code !== 'NO_ELIGIBLE_NODE') throw refused(`cannot place VM "${ref.name}": ${r.reason}`);
  if (wanted !== undefined) throw refused(`cannot ${action} VM "${ref.name}" to ${r.reason}`);
  throw refused(`no node can take VM "${ref.name}": ${r.reason}`);
}

/** Plans under the lock: the target and the keys to write. */
async function plan(zk: ZkClient, ref: VmRef, s: VmStatus, action: MigrateAction, o: MigrateOptions): Promise<MigratePlan | 'clear-lastnode'> {
  const vm = { name: ref.name, state: s.state, node: s.node, lastNode: s.lastNode };
  if (action === 'unmigrate') {
    if (s.lastNode === '') throw refused(`VM "${ref.name}" is not migrated (its lastnode is empty): nothing to undo`);
    if (s.lastNode === s.node) return 'clear-lastnode';
    return planMigration(vm, action, await chooseTarget(zk, ref, action, s.node, s.lastNode), o);
  }
  if (action === 'move' && o.target !== undefined && o.target === s.node && s.lastNode !== '') return 'clear-lastnode';
  if (action === 'migrate' && s.lastNode !== '' && !o.force) throw alreadyMigrated(vm);
  return planMigration(vm, action, await chooseTarget(zk, ref, action, s.node, o.target), o);
}

/** The `--wait` condition: the state left migrate*; success when on the target (start, or the kept state). */
export function migrateWaitStep(p: MigratePlan, s: VmStatus): WaitStep {
  const progress = `${describeStatus(s)}${p.live ? ` (→ ${p.node})` : ''}`;
  if (s.state === 'migrate' || s.state === 'migrate-live') return { done: false, progress };
  if (s.state === 'fail') return { done: false, failed: s.failedReason || 'state fail (no failedreason)', progress };
  if (s.node !== p.node) return { done: false, failed: s.failedReason || `the VM is back on ${s.node}`, progress };
  if (!p.live) return { done: s.state === p.state, ...(s.state === p.state ? {} : { failed: `its state changed to ${s.state}` }), progress };
  if (s.state === 'start') return { done: true, progress };
  return { done: false, failed: `its state changed to ${s.state}`, progress };
}

/**
 * migrate/move/unmigrate under the VM's state Lock, writing state, node and lastnode in one
 * transaction (nothing when refused). With `waitS`, waits for the node daemons (see
 * {@link migrateWaitStep}): an aborted migration (vmd writes the VM back to its source with a
 * failedreason) is a failure (exit 1). Returns a one-line human result.
 */
export async function migrateVm(ctx: CliContext, ref: VmRef, action: MigrateAction, o: MigrateOptions): Promise<string> {
  const { zk } = await ctx.cluster();
  const d = domainKeys(ref.uuid);
  const result = await withStateLock(ctx, zk, ref, o.waitS ?? LOCK_TIMEOUT_S, async () => {
    const s = await readVmStatus(zk, ref);
    const p = await plan(zk, ref, s, action, o);
    const pairs: WritePair[] = p === 'clear-lastnode'
      ? [pair(d.lastNode, '')]
      : [pair(d.state, p.state), pair(d.node, p.node), pair(d.lastNode, p.lastNode)];
    await zk.write(pairs);
    return { p, from: s.node };
  });
  const { p, from } = result;
  if (p === 'clear-lastnode') return `VM "${ref.name}" stays on ${from}; cleared its lastnode`;
  const how = p.live ? `${p.state} ${from} → ${p.node}` : `assigned to ${p.node} (was ${from}; ${p.state}, nothing to move)`;
  const head = `VM "${ref.name}": ${how}${p.lastNode ? `, lastnode ${p.lastNode}` : ''}`;
  if (o.waitS === undefined) return head;
  await waitUntil(ctx, `VM "${ref.name}" ${action}`, o.waitS, async () => migrateWaitStep(p, await readVmStatus(zk, ref)));
  return `${head}; done: ${p.live ? `running on ${p.node}` : p.state}`;
}
