import { domainKeys, paths, readKey, readKeyIfExists, type KeySpec, type ZkClient } from '@pvc/zk';
import { refused, usage } from './errors.js';

/** A VM as the CLI names it. */
export interface VmRef {
  uuid: string;
  name: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether text looks like a UUID (8-4-4-4-12 hex). */
export function isUuid(text: string): boolean {
  return UUID.test(text);
}

/** Every VM (`/domains/<uuid>` and its name), sorted by name then UUID. */
export async function listVmRefs(zk: ZkClient): Promise<VmRef[]> {
  const uuids = await zk.children(paths.domains);
  const refs = await Promise.all(
    uuids.map(async (uuid) => ({ uuid, name: await readKey(zk, domainKeys(uuid).root) })),
  );
  return refs.sort((a, b) => a.name.localeCompare(b.name) || a.uuid.localeCompare(b.uuid));
}

/**
 * The VM a user means: an exact UUID, else the one VM with that name. Two VMs with the same name
 * (possible in a tree written by other tools) is an error listing their UUIDs.
 */
export async function findVm(zk: ZkClient, nameOrUuid: string): Promise<VmRef> {
  if (nameOrUuid === '') throw usage('expected a VM name or UUID, got ""');
  const refs = await listVmRefs(zk);
  const byUuid = refs.find((r) => r.uuid.toLowerCase() === nameOrUuid.toLowerCase());
  if (byUuid) return byUuid;
  const byName = refs.filter((r) => r.name === nameOrUuid);
  if (byName.length === 1 && byName[0]) return byName[0];
  if (byName.length > 1) {
    throw refused(`VM name "${nameOrUuid}" matches ${byName.length} VMs (${byName.map((r) => r.uuid).join(', ')}): give the UUID`);
  }
  throw refused(`no VM named or with UUID "${nameOrUuid}"`);
}

/** Every node name, sorted. */
export async function listNodes(zk: ZkClient): Promise<string[]> {
  return (await zk.children(paths.nodes)).sort();
}

/** Checks that a node exists; returns its name. */
export async function findNode(zk: ZkClient, name: string): Promise<string> {
  if (name === '' || name.includes('/')) throw usage(`"${name}" is not a node name`);
  if ((await zk.exists(paths.node(name).root)) !== undefined) return name;
  const known = await listNodes(zk);
  throw refused(`no node named "${name}"${known.length ? ` (nodes: ${known.join(', ')})` : ' (the cluster has no nodes yet)'}`);
}

/** Reads a key that must exist; a missing key is reported with its path (bad data in ZK). */
export async function requireKey<T, F>(zk: ZkClient, spec: KeySpec<T, F>): Promise<T | F> {
  const v = await readKeyIfExists(zk, spec);
  if (v === undefined && (await zk.exists(spec.path)) === undefined) throw refused(`bad data in Zookeeper: ${spec.path} is missing`);
  return v as T | F;
}
