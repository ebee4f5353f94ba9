import { parseNodeLimit, SELECTORS } from '@pvc/placement';
import {
  isOneOf, MIGRATION_METHODS as METHODS, nodeKeys, readNodeFigures, VM_SELECTORS, type MigrationMethod, type NodeFigures, type VmSelector, type ZkClient,
} from '@pvc/zk';
import { refused, usage } from '../errors.js';
import { listNodes, listVmRefs, type VmRef } from '../lookup.js';

/**
 * Checks shared by `vm define`, `vm modify`, `vm meta` and `vm vcpu|memory set` (inventory §5.5).
 * Every check throws a one-line `CliError` and writes nothing.
 */

/** Values `--node-selector` accepts (`none` = the cluster's selector). */
export const NODE_SELECTORS: readonly VmSelector[] = [...SELECTORS, 'none'];
/** Values `--migration-method` accepts. */
export const MIGRATION_METHODS: readonly MigrationMethod[] = ['live', 'shutdown', 'none'];

/**
 * CPUs a node keeps for itself: min(2, floor(cpus / 2)). The original requires vCPUs < CPUs − 2,
 * which refuses every VM on a 2-CPU host; here vCPUs ≤ CPUs − reserve, so a 2-CPU host takes 1
 * vCPU, a 4-CPU host 2, an 8-CPU host 6 (the original: 5).
 */
export function cpuReserve(cpus: number): number {
  return Math.min(2, Math.floor(cpus / 2));
}

/** The most vCPUs a VM may have on a node with `cpus` CPUs. */
export function maxVcpus(cpus: number): number {
  return cpus - cpuReserve(cpus);
}

/** Help text of the vCPU/memory guard, shown by the commands that apply it. */
export const GUARD_HELP =
  'Guards: memory must be below the node\'s total memory; vCPUs ≤ node CPUs − min(2, floor(CPUs/2)) ' +
  '(the original demands vCPUs < CPUs − 2, which refuses every VM on a 2-CPU host).';

/** Why a VM of this size cannot run on the node, or null when it can (memory and vCPU guards). */
export function whyTooBig(node: NodeFigures, memoryMiB: number, vcpus: number): string | null {
  if (node.memTotalMiB <= 0) return `node ${node.name} reports no total memory (is its daemon running?)`;
  if (memoryMiB >= node.memTotalMiB) {
    return `${memoryMiB} MiB of memory is not below node ${node.name}'s total of ${node.memTotalMiB} MiB`;
  }
  if (node.staticCpus === undefined) return `node ${node.name} reports no CPU count (is its daemon running?)`;
  const max = maxVcpus(node.staticCpus);
  if (vcpus > max) {
    return `${vcpus} vCPUs exceed node ${node.name}'s limit of ${max} (${node.staticCpus} CPUs, ${cpuReserve(node.staticCpus)} kept for the host)`;
  }
  return null;
}

/** Applies the size guards against the VM's node (modify, vcpu/memory set); refused when it does not fit. */
export async function guardOnNode(zk: ZkClient, vmName: string, node: string, memoryMiB: number, vcpus: number): Promise<void> {
  if (node === '' || (await zk.exists(nodeKeys(node).root.path)) === undefined) {
    throw refused(`VM ${vmName} is assigned to node "${node}", which is not a node of the cluster`);
  }
  const why = whyTooBig(await readNodeFigures(zk, node), memoryMiB, vcpus);
  if (why !== null) throw refused(`VM ${vmName}: ${why}`);
}

/** Name and UUID must not be taken by another VM (`except` = the VM being modified). */
export async function guardUnique(zk: ZkClient, name: string, uuid: string | undefined, except?: string): Promise<void> {
  const refs = (await listVmRefs(zk)).filter((r) => r.uuid !== except);
  const byName = refs.find((r) => r.name === name);
  if (byName) throw refused(`a VM named "${name}" already exists (UUID ${byName.uuid})`);
  const byUuid = uuid === undefined ? undefined : refs.find((r) => r.uuid.toLowerCase() === uuid);
  if (byUuid) throw refused(`UUID ${uuid ?? ''} is already used by VM "${byUuid.name}"`);
}

/** Parses `--node-limit`: every name must be a node of the cluster ("" = no limit). */
export async function parseLimitOption(zk: ZkClient, raw: string): Promise<string[]> {
  const names = parseNodeLimit(raw);
  const bad = names.find((n) => n.includes('/'));
  if (bad !== undefined) throw usage(`--node-limit: "${bad}" is not a node name`);
  const known = await listNodes(zk);
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length > 0) {
    throw usage(`--node-limit: ${unknown.map((n) => `"${n}"`).join(', ')} ${unknown.length === 1 ? 'is not a node' : 'are not nodes'} of the cluster (nodes: ${known.join(', ') || 'none'})`);
  }
  return names;
}

/** Lower-cases and checks `--node-selector`. */
export function parseSelectorOption(raw: string): VmSelector {
  const v = raw.toLowerCase();
  if (!isOneOf(VM_SELECTORS, v)) throw usage(`--node-selector: "${raw}" is not one of ${NODE_SELECTORS.join(', ')}`);
  return v;
}

/** Lower-cases and checks `--migration-method`. */
export function parseMethodOption(raw: string): MigrationMethod {
  const v = raw.toLowerCase();
  if (!isOneOf(METHODS, v)) throw usage(`--migration-method: "${raw}" is not one of ${MIGRATION_METHODS.join(', ')}`);
  return v;
}

/** Parses a positive whole number option (`--migration-max-downtime`, `vcpu set`, `memory set`). */
export function parsePositiveInt(raw: string, what: string): number {
  const n = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(n) || n <= 0) throw usage(`${what}: expected a positive whole number, got "${raw}"`);
  return n;
}

/** Checks a tag name: one ZK path segment, no spaces at the ends. */
export function parseTagName(raw: string): string {
  if (raw === '' || raw.includes('/') || raw !== raw.trim() || raw === '.' || raw === '..') {
    throw usage(`tag "${raw}" is not a valid tag name (non-empty, no "/", no leading or trailing spaces)`);
  }
  return raw;
}

/** The VM a guard message is about. */
export function vmLabel(ref: VmRef): string {
  return `${ref.name} (${ref.uuid})`;
}
