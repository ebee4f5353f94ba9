import {
  networkKeys, newNetworkObject, pair, paths, readKey, ZkError, type ClientNetwork, type NetworkType, type WritePair, type ZkClient,
} from '@pvc/zk';
import { refused, usage } from '../errors.js';
import { findNetwork } from './network-read.js';
import { checkSettings, parseMtu, parseNameServers, parseVni, type NetworkSettings } from './network-settings.js';

/**
 * `pvc network add|modify|remove`: the original API's `add_network` / `modify_network` /
 * `remove_network` (inventory §1.4), written through the key codecs of `@pvc/zk`.
 */

/** Options of `network add` and `network modify`, as given on the command line. */
export interface NetworkOptions {
  description?: string;
  type?: string;
  mtu?: string;
  domain?: string;
  dnsServer?: string[];
  ipnet?: string;
  gateway?: string;
  ipnet6?: string;
  gateway6?: string;
  dhcp?: boolean;
  dhcpStart?: string;
  dhcpEnd?: string;
}

const orNull = (v: string | undefined): string | null => (v === undefined || v === '' ? null : v);

/** Every stored description (also of networks the reader skipped), for the uniqueness guard. */
async function descriptions(zk: ZkClient): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const vni of await zk.children(paths.networks)) out.set(await readKey(zk, networkKeys(vni).root), vni);
  return out;
}

async function guardUniqueDescription(zk: ZkClient, description: string, self?: number): Promise<void> {
  const owner = (await descriptions(zk)).get(description);
  if (owner !== undefined && owner !== String(self)) throw refused(`a network with description "${description}" already exists (VNI ${owner})`);
}

/**
 * `network add <vni>`: checks, then creates the network with every v15 key in one transaction
 * (objects appear atomically, §0). Managed networks get the domain `<description>.local` when
 * none is given, and the IPv6 gateway `<prefix>1`, as the original's API does.
 */
export async function addNetwork(zk: ZkClient, vniText: string, o: NetworkOptions): Promise<NetworkSettings> {
  if (o.type !== 'managed' && o.type !== 'bridged') throw usage(`--type must be managed or bridged, not "${o.type ?? ''}"`);
  const type: NetworkType = o.type;
  const vni = parseVni(vniText, type);
  const description = o.description ?? '';
  const s = checkSettings({
    vni, description, type, mtu: parseMtu(o.mtu ?? ''),
    domain: o.domain ?? (type === 'managed' ? `${description}.local` : ''),
    nameServers: parseNameServers(o.dnsServer ?? []),
    ip4Network: orNull(o.ipnet), ip4Gateway: orNull(o.gateway), dhcp4: o.dhcp === true,
    dhcp4Start: orNull(o.dhcpStart), dhcp4End: orNull(o.dhcpEnd), ip6Network: orNull(o.ipnet6), ip6Gateway: orNull(o.gateway6),
  });
  if ((await zk.exists(paths.network(vni).root)) !== undefined) throw refused(`a network with VNI ${vni} already exists`);
  await guardUniqueDescription(zk, description);
  const obj = newNetworkObject({
    vni, description, type, mtu: s.mtu ?? '', domain: s.domain, nameServers: s.nameServers,
    ip4Network: s.ip4Network, ip4Gateway: s.ip4Gateway, ip6Network: s.ip6Network, ip6Gateway: s.ip6Gateway,
    dhcp4: s.dhcp4, dhcp4Start: s.dhcp4Start, dhcp4End: s.dhcp4End,
  });
  try {
    await zk.createObject(obj.root, obj.entries);
  } catch (err) {
    if (err instanceof ZkError && err.code === 'NODE_EXISTS') throw refused(`network ${vni} was added by someone else meanwhile; nothing written`);
    throw err;
  }
  return s;
}

/** The stored settings of a network, for `modify` to merge onto. */
export function settingsOf(n: ClientNetwork): NetworkSettings {
  return {
    vni: n.vni, description: n.description, type: n.type, mtu: n.mtu, domain: n.domain, nameServers: n.nameServers,
    ip4Network: n.ip4.network, ip4Gateway: n.ip4.gateway, dhcp4: n.ip4.dhcp, dhcp4Start: n.ip4.dhcpStart, dhcp4End: n.ip4.dhcpEnd,
    ip6Network: n.ip6.network, ip6Gateway: n.ip6.gateway,
  };
}

/**
 * Merges `modify` options onto stored settings. `""` clears a value (`--ipnet ''` disables IPv4;
 * `--mtu ''` returns to the nodes' maximum; `--dns-server ''` clears the list). A network that is
 * cleared or changed without its gateway given loses its gateway: IPv4 then needs `--gateway`,
 * IPv6 gets `<prefix>1` again, as the original regenerates it.
 */
export function mergeSettings(cur: NetworkSettings, o: NetworkOptions): NetworkSettings {
  const pick = (opt: string | undefined, stored: string | null): string | null => (opt === undefined ? stored : orNull(opt));
  const ip4Network = pick(o.ipnet, cur.ip4Network);
  const ip6Network = pick(o.ipnet6, cur.ip6Network);
  const ip4Changed = o.ipnet !== undefined && ip4Network !== cur.ip4Network;
  const ip6Changed = o.ipnet6 !== undefined && ip6Network !== cur.ip6Network;
  return {
    ...cur,
    description: o.description ?? cur.description,
    mtu: o.mtu === undefined ? cur.mtu : parseMtu(o.mtu),
    domain: o.domain ?? cur.domain,
    nameServers: o.dnsServer === undefined ? cur.nameServers : parseNameServers(o.dnsServer.filter((v, _i, all) => !(all.length === 1 && v === ''))),
    ip4Network,
    ip4Gateway: o.gateway !== undefined ? orNull(o.gateway) : ip4Changed ? null : cur.ip4Gateway,
    ip6Network,
    ip6Gateway: o.gateway6 !== undefined ? orNull(o.gateway6) : ip6Changed ? null : cur.ip6Gateway,
    dhcp4: o.dhcp ?? cur.dhcp4,
    dhcp4Start: pick(o.dhcpStart, cur.dhcp4Start),
    dhcp4End: pick(o.dhcpEnd, cur.dhcp4End),
  };
}

/** One written key (relative to the network) and its encoded value. */
export interface NetworkChange {
  key: string;
  value: string;
}

/** The pairs that turn `cur` into `next` (only changed keys; `dhcp6_flag` follows the IPv6 network). */
export function diffSettings(cur: NetworkSettings, next: NetworkSettings): WritePair[] {
  const k = networkKeys(cur.vni);
  const out: WritePair[] = [];
  if (next.description !== cur.description) out.push(pair(k.root, next.description));
  if (next.mtu !== cur.mtu) out.push(pair(k.mtu, next.mtu));
  if (next.domain !== cur.domain) out.push(pair(k.domain, next.domain));
  if (next.nameServers.join(',') !== cur.nameServers.join(',')) out.push(pair(k.nameServers, next.nameServers));
  const addr = [[k.ip4Network, 'ip4Network'], [k.ip4Gateway, 'ip4Gateway'], [k.dhcp4Start, 'dhcp4Start'], [k.dhcp4End, 'dhcp4End'], [k.ip6Network, 'ip6Network'], [k.ip6Gateway, 'ip6Gateway']] as const;
  for (const [spec, field] of addr) if (next[field] !== cur[field]) out.push(pair(spec, next[field]));
  if (next.dhcp4 !== cur.dhcp4) out.push(pair(k.dhcp4Flag, next.dhcp4));
  if ((next.ip6Network === null) !== (cur.ip6Network === null)) out.push(pair(k.dhcp6Flag, next.ip6Network !== null));
  return out;
}

/**
 * `network modify <net>`: merges the options onto the stored settings, checks the result as `add`
 * does (and that a new description is unique), then writes the changed keys in one transaction.
 * A cleared address is written `None` (the original writes `""` there, which its node daemon then
 * takes for an address — **[bug?]**; `None` is what it reads as "not set").
 */
export async function modifyNetwork(zk: ZkClient, ref: string, o: NetworkOptions): Promise<{ network: ClientNetwork; changes: NetworkChange[] }> {
  const given = ['description', 'mtu', 'domain', 'dnsServer', 'ipnet', 'gateway', 'ipnet6', 'gateway6', 'dhcp', 'dhcpStart', 'dhcpEnd'] as const;
  if (!given.some((g) => o[g] !== undefined)) {
    throw usage('network modify: give at least one of -d, --mtu, --domain, --dns-server, --ipnet, --gateway, --ipnet6, --gateway6, --dhcp/--no-dhcp, --dhcp-start, --dhcp-end');
  }
  const { network } = await findNetwork(zk, ref);
  const cur = settingsOf(network);
  const next = checkSettings(mergeSettings(cur, o));
  if (next.description !== cur.description) await guardUniqueDescription(zk, next.description, cur.vni);
  const pairs = diffSettings(cur, next);
  if (pairs.length > 0) await zk.write(pairs);
  const root = networkKeys(cur.vni).root.path;
  return { network, changes: pairs.map(([key, value]) => ({ key: key === root ? '(description)' : key.slice(root.length + 1), value })) };
}

/** `network remove <net>`: deletes the network with every key under it (one recursive delete). */
export async function removeNetwork(zk: ZkClient, ref: string): Promise<ClientNetwork> {
  const { network } = await findNetwork(zk, ref);
  await zk.delete(paths.network(network.vni).root);
  return network;
}
