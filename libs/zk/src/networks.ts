import { int, safeDecode, text, type Codec } from './codec.js';
import { ZkError } from './errors.js';
import { networkKeys, type KeySpec } from './keys.js';
import { checkCidr, checkDhcpRange, cidrContains, checkGateway, checkIp, checkMac, checkVni, type Cidr } from './networks-addr.js';
import { paths } from './schema.js';
import type { OpOptions, ZkClient } from './types.js';
import type { NetworkType } from './vocab.js';

/**
 * The typed reading of `/networks` (inventory §1.4): every client network with its reservations,
 * leases and ACLs, decoded through the key codecs. Bad data written by another tool never throws
 * for the whole tree: the reader returns the good networks and one {@link NetworkProblem} per bad
 * value, naming its key. A network whose VNI, type, CIDR network or gateway is unusable is skipped
 * whole (nothing about it can be built safely); other bad values fall back or drop one entry.
 */

const spec = <T, F = T>(path: string, codec: Codec<T>, fallback: F): KeySpec<T, F> => ({ path, codec, fallback, fill: '' });

/** The keys of `/networks/<vni>/dhcp4_reservations/<mac>`; root data `static`. */
export function reservationKeys(vni: string | number, mac: string) {
  const p = paths.network(vni).reservation(mac);
  return { root: spec(p.root, text, ''), ipaddr: spec(p.ipaddr, text, ''), hostname: spec(p.hostname, text, '') } as const;
}

/** The keys of `/networks/<vni>/dhcp4_leases/<mac>` (written by the lease hook); `expiry` = epoch seconds. */
export function leaseKeys(vni: string | number, mac: string) {
  const p = paths.network(vni).lease(mac);
  return {
    root: spec(p.root, text, ''), expiry: spec(p.expiry, int, 0), ipaddr: spec(p.ipaddr, text, ''),
    hostname: spec(p.hostname, text, ''), clientId: spec(p.clientId, text, '*'),
  } as const;
}

/** ACL directions: `firewall_rules/in` and `firewall_rules/out`. */
export const ACL_DIRECTIONS = ['in', 'out'] as const;
export type AclDirection = (typeof ACL_DIRECTIONS)[number];

/** The keys of `/networks/<vni>/firewall_rules/<dir>/<name>`: `rule` = nft rule text, `order` = int-str. */
export function firewallRuleKeys(vni: string | number, direction: AclDirection, name: string) {
  const p = paths.network(vni).firewallRule(direction, name);
  return { root: spec(p.root, text, ''), rule: spec(p.rule, text, ''), order: spec(p.order, int, 0) } as const;
}

/** A static DHCP reservation. `mac` is the key name as stored. */
export interface NetworkReservation {
  mac: string;
  ip: string;
  hostname: string;
}

/** A DHCP lease as the lease hook stored it. */
export interface NetworkLease {
  mac: string;
  /** Epoch seconds (dnsmasq's expiry; 0 = infinite lease). */
  expiry: number;
  ip: string;
  hostname: string;
  clientId: string;
}

/** A firewall ACL. `order` null = unreadable (reported; sorted after the numbered ones). */
export interface NetworkAcl {
  direction: AclDirection;
  name: string;
  rule: string;
  order: number | null;
}

/** One client network, checked. Absent addresses (`"None"` or empty) are null. */
export interface ClientNetwork {
  vni: number;
  description: string;
  type: NetworkType;
  /** null = the node fills in the maximum. */
  mtu: number | null;
  domain: string;
  nameServers: string[];
  ip4: { network: string | null; gateway: string | null; dhcp: boolean; dhcpStart: string | null; dhcpEnd: string | null };
  ip6: { network: string | null; gateway: string | null; dhcp: boolean };
  /** Sorted by MAC. */
  reservations: NetworkReservation[];
  /** Sorted by MAC. */
  leases: NetworkLease[];
  /** Each direction sorted by numeric order, then name. */
  acls: Record<AclDirection, NetworkAcl[]>;
}

/** Bad data found while reading: the key, what is wrong with it, and what the reader did about it. */
export interface NetworkProblem {
  /** The VNI (the `/networks` child name) the key belongs to. */
  vni: string;
  key: string;
  problem: string;
  effect: 'network skipped' | 'entry skipped' | 'default used' | 'DHCPv4 off' | 'reported only';
}

/** What {@link readClientNetworks} returns. */
export interface NetworkTree {
  /** Sorted by VNI. */
  networks: ClientNetwork[];
  problems: NetworkProblem[];
}

/** Orders ACLs by numeric `order` (the original sorts the order strings, so "10" < "2" — **[bug?]**: we do what it meant), unreadable orders last, ties by name. */
export function compareAcls(a: Pick<NetworkAcl, 'order' | 'name'>, b: Pick<NetworkAcl, 'order' | 'name'>): number {
  const oa = a.order ?? Number.POSITIVE_INFINITY;
  const ob = b.order ?? Number.POSITIVE_INFINITY;
  return oa !== ob ? (oa < ob ? -1 : 1) : a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** Reads every network under `/networks`. Never throws for bad data (only for ZK failures). */
export async function readClientNetworks(zk: ZkClient, opts: OpOptions = {}): Promise<NetworkTree> {
  const names = await childrenOf(zk, paths.networks, opts);
  const results = await Promise.all(names.map((n) => readClientNetwork(zk, n, opts)));
  const networks = results.flatMap((r) => (r.network ? [r.network] : [])).sort((a, b) => a.vni - b.vni);
  const problems = results.flatMap((r) => r.problems);
  const seen = new Map<string, number>();
  for (const n of networks) {
    const first = seen.get(n.description);
    if (first === undefined) seen.set(n.description, n.vni);
    else problems.push({ vni: String(n.vni), key: paths.network(n.vni).root, problem: `description "${n.description}" is also network ${first}'s`, effect: 'reported only' });
  }
  return { networks, problems };
}

/**
 * Reads one network by its `/networks` child name. `network` is undefined when it does not exist
 * (then `problems` is empty) or was skipped (then `problems` says why).
 */
export async function readClientNetwork(zk: ZkClient, vniText: string, opts: OpOptions = {}): Promise<{ network?: ClientNetwork; problems: NetworkProblem[] }> {
  const r = new NetReader(zk, vniText, opts);
  try {
    const network = await r.read();
    return network ? { network, problems: r.problems } : { problems: r.problems };
  } catch (err) {
    if (err instanceof ZkError && err.code === 'NO_NODE') return { problems: [] }; // removed while being read
    throw err;
  }
}

/** The children of `path`, sorted; none when it does not exist (removed meanwhile). */
export async function childrenOf(zk: ZkClient, path: string, opts: OpOptions = {}): Promise<string[]> {
  try {
    return (await zk.children(path, opts)).sort();
  } catch (err) {
    if (err instanceof ZkError && err.code === 'NO_NODE') return [];
    throw err;
  }
}

const SKIP: unique symbol = Symbol('skip');

/** Reads one network, collecting problems. */
class NetReader {
  readonly problems: NetworkProblem[] = [];

  constructor(private readonly zk: ZkClient, private readonly vni: string, private readonly opts: OpOptions) {}

  private report(key: string, problem: string, effect: NetworkProblem['effect']): typeof SKIP {
    this.problems.push({ vni: this.vni, key, problem, effect });
    return SKIP;
  }

  /** Decodes one key through its codec; a bad value is reported with `effect` and gives SKIP (or the fallback when `effect` is 'default used'). */
  private async value<T, F>(s: KeySpec<T, F>, effect: NetworkProblem['effect'] = 'default used'): Promise<T | F | typeof SKIP> {
    const raw = await this.zk.read(s.path, this.opts);
    if (raw === undefined) return effect === 'default used' ? s.fallback : this.report(s.path, 'missing', effect);
    const d = safeDecode(s.codec, raw, s.path);
    if (d.ok) return d.value;
    if (raw.trim() === '' && effect === 'default used') return s.fallback;
    this.report(s.path, `${JSON.stringify(raw.slice(0, 60))} is not ${s.codec.format}`, effect);
    return effect === 'default used' ? s.fallback : SKIP;
  }

  async read(): Promise<ClientNetwork | undefined> {
    const root = paths.network(this.vni).root;
    const vni = checkVni(this.vni);
    if (!vni.ok) return void this.report(root, vni.why, 'network skipped');
    if ((await this.zk.exists(root, this.opts)) === undefined) return undefined;
    const k = networkKeys(this.vni);
    const description = str(await this.value(k.root));
    const type = await this.value(k.type, 'network skipped');
    if (type === SKIP || type === undefined) return undefined;
    if (type === 'bridged') {
      const v = checkVni(this.vni, type);
      if (!v.ok) return void this.report(root, v.why, 'network skipped');
    }
    const ip4 = await this.family(k.ip4Network, k.ip4Gateway, 4);
    const ip6 = await this.family(k.ip6Network, k.ip6Gateway, 6);
    if (ip4 === SKIP || ip6 === SKIP) return undefined;
    const mtu = await this.value(k.mtu);
    const domain = await this.value(k.domain);
    const nameServers = await this.value(k.nameServers);
    const dhcp6 = await this.value(k.dhcp6Flag);
    const dhcp4 = await this.dhcp4(ip4);
    const [reservations, leases, aclIn, aclOut] = await Promise.all([this.reservations(ip4.cidr), this.leases(), this.acls('in'), this.acls('out')]);
    return {
      vni: vni.value, description, type, mtu: mtu === SKIP ? null : mtu, domain: str(domain), nameServers: nameServers === SKIP ? [] : nameServers,
      ip4: { network: ip4.network, gateway: ip4.gateway, ...dhcp4 },
      ip6: { network: ip6.network, gateway: ip6.gateway, dhcp: dhcp6 === true },
      reservations, leases, acls: { in: aclIn, out: aclOut },
    };
  }

  /** The network and gateway of one family; a malformed network or a gateway outside it skips the network. */
  private async family(netSpec: KeySpec<string | null>, gwSpec: KeySpec<string | null>, family: 4 | 6) {
    const net = absentIsNull(await this.value(netSpec));
    const gw = absentIsNull(await this.value(gwSpec));
    if (net === null) {
      if (gw !== null) return this.report(gwSpec.path, `gateway ${gw} without an IPv${family} network`, 'network skipped');
      return { network: null, gateway: null, cidr: undefined };
    }
    const cidr = checkCidr(net, family);
    if (!cidr.ok) return this.report(netSpec.path, cidr.why, 'network skipped');
    if (gw !== null) {
      const g = checkGateway(cidr.value, net, gw);
      if (!g.ok) return this.report(gwSpec.path, g.why, 'network skipped');
    }
    return { network: net, gateway: gw, cidr: cidr.value };
  }

  /** DHCPv4: when the flag is on, the range must lie inside the IPv4 network; otherwise DHCPv4 is reported off. */
  private async dhcp4(ip4: { network: string | null; cidr: Cidr | undefined }) {
    const k = networkKeys(this.vni);
    const flag = (await this.value(k.dhcp4Flag)) === true;
    const start = absentIsNull(await this.value(k.dhcp4Start));
    const end = absentIsNull(await this.value(k.dhcp4End));
    if (!flag) return { dhcp: false, dhcpStart: start, dhcpEnd: end };
    let why: string | undefined;
    if (!ip4.cidr || ip4.network === null) why = 'DHCPv4 is on but the network has no IPv4 network';
    else if (start === null || end === null) why = 'DHCPv4 is on but the range start or end is not set';
    else {
      const r = checkDhcpRange(ip4.cidr, ip4.network, start, end);
      if (!r.ok) why = r.why;
    }
    if (why !== undefined) this.report(why.startsWith('DHCP start') ? k.dhcp4Start.path : why.startsWith('DHCP end') ? k.dhcp4End.path : k.dhcp4Flag.path, why, 'DHCPv4 off');
    return { dhcp: why === undefined, dhcpStart: start, dhcpEnd: end };
  }

  private async reservations(cidr: Cidr | undefined): Promise<NetworkReservation[]> {
    const out: NetworkReservation[] = [];
    for (const mac of await childrenOf(this.zk, networkKeys(this.vni).reservations.path, this.opts)) {
      const k = reservationKeys(this.vni, mac);
      if (!checkMac(mac).ok) { this.report(k.root.path, `"${mac}" is not a MAC address`, 'entry skipped'); continue; }
      const ip = await this.value(k.ipaddr, 'entry skipped');
      const hostname = await this.value(k.hostname);
      if (ip === SKIP) continue;
      const addr = checkIp(ip, 4);
      if (!addr.ok) { this.report(k.ipaddr.path, addr.why, 'entry skipped'); continue; }
      if (cidr && !cidrContains(cidr, addr.value)) { this.report(k.ipaddr.path, `${ip} is outside the network`, 'entry skipped'); continue; }
      out.push({ mac, ip, hostname: str(hostname) });
    }
    return out;
  }

  private async leases(): Promise<NetworkLease[]> {
    const out: NetworkLease[] = [];
    for (const mac of await childrenOf(this.zk, networkKeys(this.vni).leases.path, this.opts)) {
      const k = leaseKeys(this.vni, mac);
      if (!checkMac(mac).ok) { this.report(k.root.path, `"${mac}" is not a MAC address`, 'entry skipped'); continue; }
      const expiry = await this.value(k.expiry, 'entry skipped');
      const ip = await this.value(k.ipaddr, 'entry skipped');
      if (expiry === SKIP || ip === SKIP) continue;
      if (!checkIp(ip, 4).ok) { this.report(k.ipaddr.path, `"${ip}" is not an IPv4 address`, 'entry skipped'); continue; }
      out.push({ mac, expiry, ip, hostname: str(await this.value(k.hostname)), clientId: str(await this.value(k.clientId)) });
    }
    return out;
  }

  private async acls(direction: AclDirection): Promise<NetworkAcl[]> {
    const out: NetworkAcl[] = [];
    const dirPath = direction === 'in' ? networkKeys(this.vni).firewallIn.path : networkKeys(this.vni).firewallOut.path;
    for (const name of await childrenOf(this.zk, dirPath, this.opts)) {
      const k = firewallRuleKeys(this.vni, direction, name);
      const rule = await this.value(k.rule, 'entry skipped');
      if (rule === SKIP) continue;
      const order = await this.value(k.order, 'reported only');
      out.push({ direction, name, rule, order: order === SKIP ? null : order });
    }
    return out.sort(compareAcls);
  }
}

function str(v: string | typeof SKIP): string {
  return v === SKIP ? '' : v;
}

/** `"None"` decodes to null through the codec; an empty value (a key the schema fill created) is absent too. */
function absentIsNull(v: string | null | typeof SKIP): string | null {
  return v === SKIP || v === null || v.trim() === '' ? null : v;
}
