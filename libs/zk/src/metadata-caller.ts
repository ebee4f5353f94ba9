import { mapLimit } from '@pvc/runtime';
import { safeDecode, type Codec } from './codec.js';
import { interfaceMacs } from './domain-bridges.js';
import { domainKeys, networkKeys } from './keys.js';
import { checkIp, checkMac, checkVni } from './networks-addr.js';
import { childrenOf, leaseKeys, reservationKeys } from './networks.js';
import { paths } from './schema.js';
import type { OpOptions, ZkClient } from './types.js';

/**
 * Who is asking the metadata API (inventory §7.5): the caller's IPv4 source address → the DHCP
 * lease or static reservation holding it on a managed network → its MAC → the VM with a NIC of
 * that MAC. Every value is decoded through the key codecs; bad data is skipped and reported with
 * its key, never guessed around. Safety rule: an answer names one VM or none — when the address
 * leads to more than one MAC, or the MAC to more than one VM, the caller is refused (`ambiguous`),
 * never given one of them (the original took the last match).
 *
 * Leases and reservations both count: a guest with a reservation gets it by DHCP, so both name the
 * same MAC; one that set its reserved address by hand has only the reservation. An address whose
 * lease and reservation name different MACs is ambiguous. A lease's expiry is not checked (as the
 * original): dnsmasq's lease hook deletes a lease when it ends.
 *
 * @module
 */

/** The VM a caller is, as the metadata API serves it. */
export interface VmIdentity {
  readonly uuid: string;
  /** The domain's root data. */
  readonly name: string;
  /** The `profile` key; null when `None` or empty. */
  readonly profile: string | null;
}

/** The outcome of {@link lookupCaller}. */
export type CallerLookup =
  | { readonly kind: 'found'; readonly vm: VmIdentity; readonly mac: string; readonly vni: number }
  /** No lease or reservation on a managed network holds the address. */
  | { readonly kind: 'unknown-address' }
  /** The address's MAC is on no VM's NIC. */
  | { readonly kind: 'no-vm'; readonly mac: string }
  /** Refused: the address or its MAC leads to more than one candidate (`why` names them). */
  | { readonly kind: 'ambiguous'; readonly why: string };

/** Bad data met on the way: the key, what is wrong, and that the entry was left out. */
export interface CallerProblem {
  readonly key: string;
  readonly problem: string;
  readonly effect: 'network skipped' | 'entry skipped' | 'domain skipped';
}

/** What {@link lookupCaller} returns. */
export interface CallerAnswer {
  readonly result: CallerLookup;
  readonly problems: readonly CallerProblem[];
}

/** Bound of parallel ZK reads of one lookup. */
const FAN_OUT = 32;

interface Holder {
  readonly vni: number;
  readonly mac: string;
  readonly key: string;
}

/**
 * Looks up the VM behind `address` (an IPv4 address; an IPv4-mapped IPv6 form is accepted). Throws
 * only for Zookeeper failures; bad data becomes `problems`. Reads every managed network's leases
 * and reservations and, once one MAC is found, every domain's XML (each request reads afresh: the
 * answer follows Zookeeper, no cache to go stale).
 */
export async function lookupCaller(zk: ZkClient, address: string, opts: OpOptions = {}): Promise<CallerAnswer> {
  const problems: CallerProblem[] = [];
  const ip = checkIp(address.replace(/^::ffff:/i, ''), 4);
  if (!ip.ok) return { result: { kind: 'unknown-address' }, problems };
  const holders = (await mapLimit(await childrenOf(zk, paths.networks, opts), FAN_OUT, (vni) => holdersIn(zk, vni, ip.value.value, problems, opts))).flat();
  const macs = [...new Set(holders.map((h) => h.mac))];
  const first = macs[0];
  if (first === undefined) return { result: { kind: 'unknown-address' }, problems };
  if (macs.length > 1) return { result: { kind: 'ambiguous', why: `address ${address} is held by ${holders.map((h) => h.key).join(', ')}` }, problems };
  const uuids = (await mapLimit(await childrenOf(zk, paths.domains, opts), FAN_OUT, (uuid) => domainHasMac(zk, uuid, first, problems, opts))).flat();
  const uuid = uuids[0];
  if (uuid === undefined) return { result: { kind: 'no-vm', mac: first }, problems };
  if (uuids.length > 1) return { result: { kind: 'ambiguous', why: `MAC ${first} is on the NICs of VMs ${uuids.join(', ')}` }, problems };
  const k = domainKeys(uuid);
  const name = await value(zk, k.root.path, k.root.codec, problems, opts);
  const profile = await value(zk, k.profile.path, k.profile.codec, problems, opts);
  if (name === undefined) return { result: { kind: 'no-vm', mac: first }, problems }; // removed meanwhile
  const vm: VmIdentity = { uuid, name, profile: profile === undefined || profile === null || profile.trim() === '' ? null : profile };
  return { result: { kind: 'found', vm, mac: first, vni: (holders[0] as Holder).vni }, problems };
}

/** The leases and reservations of network `vniText` holding the address (none unless managed). */
async function holdersIn(zk: ZkClient, vniText: string, wanted: bigint, problems: CallerProblem[], opts: OpOptions): Promise<Holder[]> {
  const vni = checkVni(vniText);
  const nk = networkKeys(vniText);
  if (!vni.ok) {
    problems.push({ key: nk.root.path, problem: vni.why, effect: 'network skipped' });
    return [];
  }
  const type = await value(zk, nk.type.path, nk.type.codec, problems, opts, 'network skipped');
  if (type !== 'managed') return [];
  const entries = async (parent: string, ipPath: (mac: string) => string): Promise<Holder[]> => {
    const found = await mapLimit(await childrenOf(zk, parent, opts), FAN_OUT, async (name): Promise<Holder[]> => {
      const mac = checkMac(name);
      const key = ipPath(name);
      if (!mac.ok) {
        problems.push({ key: key.slice(0, key.lastIndexOf('/')), problem: mac.why, effect: 'entry skipped' });
        return [];
      }
      const raw = await value(zk, key, nk.root.codec, problems, opts, 'entry skipped');
      if (raw === undefined) return [];
      const addr = checkIp(raw, 4);
      if (!addr.ok) {
        problems.push({ key, problem: addr.why, effect: 'entry skipped' });
        return [];
      }
      return addr.value.value === wanted ? [{ vni: vni.value, mac: mac.value, key: key.slice(0, key.lastIndexOf('/')) }] : [];
    });
    return found.flat();
  };
  const [leases, reservations] = await Promise.all([
    entries(nk.leases.path, (mac) => leaseKeys(vniText, mac).ipaddr.path),
    entries(nk.reservations.path, (mac) => reservationKeys(vniText, mac).ipaddr.path),
  ]);
  return [...leases, ...reservations];
}

/** `[uuid]` when the domain's XML has a NIC with `mac`; a domain whose XML cannot be read is skipped and reported. */
async function domainHasMac(zk: ZkClient, uuid: string, mac: string, problems: CallerProblem[], opts: OpOptions): Promise<string[]> {
  const k = domainKeys(uuid).xml;
  const xml = await value(zk, k.path, k.codec, problems, opts, 'domain skipped');
  if (xml === undefined) return [];
  const macs = interfaceMacs(xml);
  if (!macs.ok) {
    problems.push({ key: k.path, problem: macs.why, effect: 'domain skipped' });
    return [];
  }
  return macs.macs.includes(mac) ? [uuid] : [];
}

/** One key through its codec; undefined when absent or (reported with `effect`) undecodable. */
async function value<T>(zk: ZkClient, path: string, codec: Codec<T>, problems: CallerProblem[], opts: OpOptions, effect: CallerProblem['effect'] = 'entry skipped'): Promise<T | undefined> {
  const raw = await zk.read(path, opts);
  if (raw === undefined) return undefined;
  const d = safeDecode(codec, raw, path);
  if (d.ok) return d.value;
  problems.push({ key: path, problem: `${JSON.stringify(raw.slice(0, 60))} is not ${codec.format}`, effect });
  return undefined;
}

