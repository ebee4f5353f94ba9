import {
  checkCidr, checkIp, checkMac, cidrContains, networkKeys, pair, reservationKeys, ZkError, type ClientNetwork, type ZkClient,
} from '@pvc/zk';
import { refused, usage } from '../errors.js';
import { findNetwork } from './network-read.js';
import { checkName } from './network-settings.js';

/**
 * `pvc network dhcp add|remove`: the original API's `add_dhcp_reservation` /
 * `remove_dhcp_reservation`. A reservation is `dhcp4_reservations/<mac>` (data `static`, MAC
 * lower-cased) with `ipaddr` and `hostname`; netd on the primary mirrors it into dnsmasq.
 */

/** DHCP lives on managed networks with an IPv4 network. */
function dhcpOf(network: ClientNetwork): string {
  if (network.type !== 'managed') throw refused(`network ${network.vni} is bridged: only managed networks have DHCP`);
  if (network.ip4.network === null) throw refused(`network ${network.vni} has no IPv4 network: DHCPv4 reservations need one`);
  return network.ip4.network;
}

/**
 * `dhcp add <net> <ip> <hostname> <mac>`: MAC form (stored lower-case), an IPv4 address inside the
 * network, a MAC not yet reserved and an address no other MAC has reserved; then the reservation
 * appears in one transaction.
 */
export async function addReservation(zk: ZkClient, ref: string, ip: string, hostname: string, rawMac: string): Promise<{ network: ClientNetwork; mac: string }> {
  const mac = checkMac(rawMac);
  if (!mac.ok) throw usage(mac.why);
  const addr = checkIp(ip, 4);
  if (!addr.ok) throw usage(addr.why);
  checkName('hostname', hostname);
  const { network } = await findNetwork(zk, ref);
  const netText = dhcpOf(network);
  const net = checkCidr(netText, 4);
  if (net.ok && !cidrContains(net.value, addr.value)) throw usage(`IP address ${ip} is not inside network ${network.vni}'s ${netText}`);
  if (network.reservations.some((r) => r.mac === mac.value)) throw refused(`a reservation for MAC ${mac.value} already exists in network ${network.vni}`);
  const taken = network.reservations.find((r) => r.ip === ip);
  if (taken) throw refused(`IP address ${ip} is already reserved for ${taken.mac} (${taken.hostname}) in network ${network.vni}`);
  const parent = networkKeys(network.vni).reservations;
  if ((await zk.exists(parent.path)) === undefined) await zk.write([pair(parent, '')]);
  const k = reservationKeys(network.vni, mac.value);
  try {
    await zk.createObject(k.root.path, [['', 'static'], ['hostname', hostname], ['ipaddr', ip]]);
  } catch (err) {
    if (err instanceof ZkError && err.code === 'NODE_EXISTS') throw refused(`a reservation for MAC ${mac.value} already exists in network ${network.vni}`);
    throw err;
  }
  return { network, mac: mac.value };
}

/** What `dhcp remove` removed. */
export interface RemovedEntry {
  network: ClientNetwork;
  kind: 'reservation' | 'lease';
  mac: string;
}

/**
 * `dhcp remove <net> <what>`: `what` is a MAC, IP address or hostname of a static reservation, or
 * else of a dynamic lease (as the original; removing a lease only forgets it in Zookeeper).
 * A hostname or address that matches several entries is refused, naming them.
 */
export async function removeDhcpEntry(zk: ZkClient, ref: string, what: string): Promise<RemovedEntry> {
  const { network } = await findNetwork(zk, ref);
  const key = what.toLowerCase();
  const matches = (e: { mac: string; ip: string; hostname: string }): boolean => e.mac === key || e.ip === what || e.hostname === what;
  for (const kind of ['reservation', 'lease'] as const) {
    const found = (kind === 'reservation' ? network.reservations : network.leases).filter(matches);
    if (found.length > 1) throw refused(`"${what}" matches ${found.length} ${kind}s (${found.map((f) => f.mac).join(', ')}): give the MAC`);
    const hit = found[0];
    if (hit) {
      const path = kind === 'reservation' ? reservationKeys(network.vni, hit.mac).root.path : `${networkKeys(network.vni).leases.path}/${hit.mac}`;
      await zk.delete(path);
      return { network, kind, mac: hit.mac };
    }
  }
  throw refused(`no DHCP reservation or lease matching "${what}" in network ${network.vni}`);
}
