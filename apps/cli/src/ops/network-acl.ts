import { firewallRuleKeys, networkKeys, pair, type AclDirection, type ClientNetwork, type NetworkAcl, type WritePair, type ZkClient, type ZkOp } from '@pvc/zk';
import { refused, usage } from '../errors.js';
import { findNetwork } from './network-read.js';
import { checkName } from './network-settings.js';

/**
 * `pvc network acl add|remove`: the original API's `add_acl` / `remove_acl`. ACL names are unique
 * within a network (both directions); `order` is the position in its direction's chain and is
 * renumbered 0..n−1 on every add and remove, as the original's API does — here in the same
 * transaction as the change (the original writes each renumbered order on its own).
 */

/** Options of `acl add`. */
export interface AclAddOptions {
  description: string;
  rule: string;
  direction: AclDirection;
  /** Position in the chain (default: last). */
  order?: string;
}

/** The network's ACLs must be there to act on: only managed networks have a firewall. */
function firewallOf(network: ClientNetwork): void {
  if (network.type !== 'managed') throw refused(`network ${network.vni} is bridged: only managed networks have a firewall`);
}

/** `--order`: a non-negative integer; beyond the end means last (as the original). */
export function parseOrder(text: string | undefined, length: number): number {
  if (text === undefined || text === '') return length;
  if (!/^\d+$/.test(text)) throw usage(`--order "${text}" is not a position: 0, 1, 2, ...`);
  return Math.min(Number(text), length);
}

/** Renumbering pairs: every ACL of `list` whose stored order differs from its position. */
function renumber(vni: number, list: readonly Pick<NetworkAcl, 'direction' | 'name' | 'order'>[], skip: string): WritePair[] {
  return list.flatMap((a, idx) => (a.name === skip || a.order === idx ? [] : [pair(firewallRuleKeys(vni, a.direction, a.name).order, idx)]));
}

/** `acl add <net>`: inserts the rule at `order` (default last) and renumbers the direction, in one transaction. */
export async function addAcl(zk: ZkClient, ref: string, o: AclAddOptions): Promise<{ network: ClientNetwork; order: number }> {
  const name = checkName('ACL description', o.description);
  if (o.rule.trim() === '') throw usage('--rule must not be empty (an nft rule such as "tcp dport 22 accept")');
  const { network } = await findNetwork(zk, ref);
  firewallOf(network);
  const clash = [...network.acls.in, ...network.acls.out].find((a) => a.name === name);
  if (clash) throw refused(`network ${network.vni} already has an ACL "${name}" (${clash.direction})`);
  const list: Pick<NetworkAcl, 'direction' | 'name' | 'order'>[] = [...network.acls[o.direction]];
  const order = parseOrder(o.order, list.length);
  list.splice(order, 0, { direction: o.direction, name, order });
  const k = networkKeys(network.vni);
  const parents: WritePair[] = [];
  if ((await zk.exists(k.firewallRules.path)) === undefined) parents.push(pair(k.firewallRules, ''));
  const dir = o.direction === 'in' ? k.firewallIn : k.firewallOut;
  if ((await zk.exists(dir.path)) === undefined) parents.push(pair(dir, ''));
  const r = firewallRuleKeys(network.vni, o.direction, name);
  await zk.write([...parents, ...renumber(network.vni, list, name), pair(r.root, ''), pair(r.order, order), pair(r.rule, o.rule)]);
  return { network, order };
}

/**
 * `acl remove <net> <name>`: deletes the ACL and renumbers the rest of its direction in one
 * transaction (each renumbered order set on the version read, so a concurrent change aborts it).
 */
export async function removeAcl(zk: ZkClient, ref: string, rawName: string): Promise<{ network: ClientNetwork; acl: NetworkAcl }> {
  const { network } = await findNetwork(zk, ref);
  const acl = [...network.acls.in, ...network.acls.out].find((a) => a.name === rawName);
  if (!acl) {
    const names = [...network.acls.in, ...network.acls.out].map((a) => a.name);
    throw refused(`network ${network.vni} has no ACL "${rawName}"${names.length ? ` (ACLs: ${names.join(', ')})` : ''}`);
  }
  const k = firewallRuleKeys(network.vni, acl.direction, acl.name);
  const ops: ZkOp[] = [];
  for (const child of await zk.children(k.root.path)) ops.push({ type: 'delete', path: `${k.root.path}/${child}` });
  ops.push({ type: 'delete', path: k.root.path });
  const rest = network.acls[acl.direction].filter((a) => a.name !== acl.name);
  for (const [path, value] of renumber(network.vni, rest, '')) {
    const st = await zk.exists(path);
    ops.push(st ? { type: 'set', path, data: value, version: st.version } : { type: 'create', path, data: value });
  }
  await zk.multi(ops);
  return { network, acl };
}
