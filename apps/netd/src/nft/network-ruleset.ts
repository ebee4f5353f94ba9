/**
 * The text of `networks/<vni>.nft` for one managed network (pvc-inventory §7.4). Pure.
 *
 * Same chains and rules as the original's `VXNetworkInstance.updateFirewallRules`, in the same
 * order (base rules, IPv6 jumps, IPv4 jumps, user rules), with two deliberate differences:
 * - ACLs are sorted by their `order` as numbers (the original sorts the order strings, so "10"
 *   comes before "2" — pvc-inventory §7.4 **[bug?]**; it also keyed them by order, so two ACLs
 *   with the same order lost one); ties are broken by name, so nothing is lost;
 * - a network or rule text that could smuggle more than one nft command into the file (a line
 *   break, a `;` outside quotes, an address that is not one) is refused here, before nft sees it.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { baseTableLines } from './layout.js';

/** Direction of an ACL: `in` = traffic to the network (`ip daddr <net>`), `out` = from it. */
export type AclDirection = 'in' | 'out';

/** One user ACL: `/networks/<vni>/firewall_rules/<direction>/<name>` with `rule` and `order`. */
export interface NetworkAcl {
  /** The ZK node name (the ACL's description). */
  readonly name: string;
  /** nft rule text, written after `add rule inet filter vxlan<vni>-<dir> counter`. */
  readonly rule: string;
  /**
   * Position in its chain: an integer, or the ZK string holding one; anything else (null =
   * unreadable, as `@pvc/zk` reads it) goes last.
   */
  readonly order: number | string | null;
}

/** One address family of a network: its CIDR and gateway. */
export interface NetworkFamily {
  /** CIDR, e.g. `10.100.0.0/24` or `2001:db8:100::/64` (host bits are masked by nft). */
  readonly network: string;
  readonly gateway: string;
}

/** What the firewall needs of one managed network. */
export interface NetworkFirewallSpec {
  /** VXLAN id, 1..16777215. */
  readonly vni: number;
  /** null when the network has no IPv4 (the original: `ip4_gateway` is `"None"`). */
  readonly ip4: NetworkFamily | null;
  /** null when the network has no IPv6 (the original: `ip6_gateway` is `"None"`). */
  readonly ip6: NetworkFamily | null;
  readonly acls: { readonly in: readonly NetworkAcl[]; readonly out: readonly NetworkAcl[] };
}

/** An ACL in its place: its direction and the nft command that adds it. */
export interface PlacedAcl extends NetworkAcl {
  readonly direction: AclDirection;
  /** `add rule inet filter vxlan<vni>-<dir> counter <rule>` */
  readonly command: string;
}

/** Highest VXLAN network identifier (24 bits). */
export const MAX_VNI = 16_777_215;

/** Identifies one ACL of one network (for the set of rules left out). */
export function aclKey(vni: number, direction: AclDirection, name: string): string {
  return `${vni}/${direction}/${name}`;
}

/** The numeric order of an ACL; NaN when it is not an integer (sorted last). */
function orderValue(order: number | string | null): number {
  if (order === null) return Number.NaN;
  if (typeof order === 'number') return Number.isInteger(order) ? order : Number.NaN;
  return /^\s*[-+]?\d+\s*$/.test(order) ? Number.parseInt(order, 10) : Number.NaN;
}

function compareAcls(a: NetworkAcl, b: NetworkAcl): number {
  const [x, y] = [orderValue(a.order), orderValue(b.order)];
  if (Number.isNaN(x) !== Number.isNaN(y)) return Number.isNaN(x) ? 1 : -1;
  if (!Number.isNaN(x) && x !== y) return x - y;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** The network's ACLs as written: all `in` then all `out`, each in numeric order, ties by name. */
export function placedAcls(spec: NetworkFirewallSpec): PlacedAcl[] {
  return (['in', 'out'] as const).flatMap((direction) =>
    [...spec.acls[direction]].sort(compareAcls).map((acl) => ({ ...acl, direction, command: aclCommand(spec.vni, direction, acl.rule) })),
  );
}

/** The nft command adding `rule` to the network's `direction` chain. */
export function aclCommand(vni: number, direction: AclDirection, rule: string): string {
  return `add rule inet filter vxlan${vni}-${direction} counter ${rule.trim()}`.trimEnd();
}

/**
 * Why `spec` cannot be written (its VNI, a CIDR or a gateway is malformed), naming the field;
 * undefined when it is fine. Such a network gets no file.
 */
export function networkProblem(spec: NetworkFirewallSpec): string | undefined {
  if (!Number.isInteger(spec.vni) || spec.vni < 1 || spec.vni > MAX_VNI) return `vni ${String(spec.vni)} is not an integer from 1 to ${MAX_VNI}`;
  for (const [family, value, isIP, maxPrefix] of [['ip4', spec.ip4, isIPv4, 32], ['ip6', spec.ip6, isIPv6, 128]] as const) {
    if (value === null) continue;
    const [addr = '', prefix, extra] = value.network.split('/');
    if (!isIP(addr) || extra !== undefined || prefix === undefined || !/^\d{1,3}$/.test(prefix) || Number(prefix) > maxPrefix) {
      return `${family}_network ${JSON.stringify(value.network)} is not an ${family === 'ip4' ? 'IPv4' : 'IPv6'} CIDR`;
    }
    if (!isIP(value.gateway)) return `${family}_gateway ${JSON.stringify(value.gateway)} is not an ${family === 'ip4' ? 'IPv4' : 'IPv6'} address`;
  }
  return undefined;
}

/**
 * Why a rule text is refused without asking nft: it would put more than one command into the
 * file (a line break; a `;` outside double quotes). undefined when it is one rule's text.
 */
export function aclProblem(rule: string): string | undefined {
  if (/[\r\n]/.test(rule)) return 'the rule text contains a line break (one nft rule per ACL)';
  let quoted = false;
  for (const c of rule) {
    if (c === '"') quoted = !quoted;
    else if (c === ';' && !quoted) return "the rule text contains ';' (one nft rule per ACL)";
  }
  return undefined;
}

/** The chains and fixed rules of the network (everything but the user ACLs), without comments. */
export function networkBaseCommands(spec: NetworkFirewallSpec): string[] {
  return networkBaseLines(spec).filter((l) => !l.startsWith('#'));
}

function networkBaseLines(spec: NetworkFirewallSpec): string[] {
  const vx = `vxlan${spec.vni}`;
  const br = `vmbr${spec.vni}`;
  const input = (match: string, verdict = 'accept'): string => `add rule inet filter input ${match}meta iifname ${br} counter ${verdict}`;
  const lines = [
    `# Rules for network ${vx}`,
    `add chain inet filter ${vx}-in`,
    `add chain inet filter ${vx}-out`,
    `add rule inet filter ${vx}-in counter`,
    `add rule inet filter ${vx}-out counter`,
    '# Allow ICMP traffic into the router from network',
    input('ip protocol icmp '),
    input('ip6 nexthdr icmpv6 '),
    '# Allow DNS, DHCP, and NTP traffic into the router from network',
    input('tcp dport 53 '),
    input('udp dport 53 '),
    input('udp dport 67 '),
    input('udp dport 123 '),
    input('ip6 nexthdr udp udp dport 547 '),
    '# Allow metadata API into the router from network',
    input('tcp dport 80 '),
    '# Block traffic into the router from network',
    input('', 'drop'),
  ];
  for (const [family, value, match] of [['IPv6', spec.ip6, 'ip6'], ['IPv4', spec.ip4, 'ip']] as const) {
    if (value === null) continue;
    lines.push(
      `# Jump from forward chain to this chain when matching net (${family})`,
      `add rule inet filter forward ${match} daddr ${value.network} counter jump ${vx}-in`,
      `add rule inet filter forward ${match} saddr ${value.network} counter jump ${vx}-out`,
    );
  }
  return lines;
}

/**
 * The whole `networks/<vni>.nft`. ACLs whose {@link aclKey} is in `leftOut` (refused by nft or by
 * {@link aclProblem}) are written as a comment naming them instead of their rule.
 * `spec` must have passed {@link networkProblem}.
 */
export function networkRuleset(spec: NetworkFirewallSpec, leftOut: ReadonlySet<string> = new Set()): string {
  const lines = [`# Written by netd for network ${spec.vni}; rewritten with every change, do not edit.`, ...networkBaseLines(spec), '# User rules'];
  for (const acl of placedAcls(spec)) {
    const order = orderValue(acl.order);
    const orderText = acl.order === null ? 'no order' : `order ${Number.isNaN(order) ? JSON.stringify(String(acl.order)) : order}`;
    const label = `${acl.direction} ${JSON.stringify(acl.name)} (${orderText})`;
    if (leftOut.has(aclKey(spec.vni, acl.direction, acl.name))) lines.push(`# left out (refused): ${label}`);
    else lines.push(`# ${label}`, acl.command);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * A file that checks one ACL on its own (`nft -c` only, never loaded): the base table, the static
 * files, every network's chains and fixed rules, then `acl` (none: the context alone).
 */
export function probeRuleset(staticDir: string, networks: readonly NetworkFirewallSpec[], acl?: PlacedAcl): string {
  return [
    '# Written by netd to check one ACL against the networks\' chains (nft -c); never loaded.',
    'flush ruleset',
    ...baseTableLines(),
    `include "${staticDir}/*"`,
    ...networks.flatMap(networkBaseCommands),
    ...(acl ? [acl.command] : []),
    '',
  ].join('\n');
}
