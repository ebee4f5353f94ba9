import { checkCidr, checkDhcpRange, checkGateway, checkIp, checkVni, defaultIp6Gateway, type NetworkType } from '@pvc/zk';
import { usage } from '../errors.js';

/**
 * The settings of a client network as `pvc network add|modify` take them, and their guards: the
 * original's (VNI, CIDR networks, gateways inside them, a DHCP range inside the IPv4 network,
 * start and end required with DHCP, a description without blanks) plus the ones it leaves to the
 * nodes to fail on (VLAN ids of bridged networks, a managed IPv4 network without a gateway).
 * Every failure is a usage error (exit 2) naming the option; nothing is written.
 */
export interface NetworkSettings {
  vni: number;
  description: string;
  type: NetworkType;
  /** null = the nodes fill in the maximum. */
  mtu: number | null;
  domain: string;
  nameServers: string[];
  ip4Network: string | null;
  ip4Gateway: string | null;
  dhcp4: boolean;
  dhcp4Start: string | null;
  dhcp4End: string | null;
  ip6Network: string | null;
  ip6Gateway: string | null;
}

/** A name (description, ACL name, hostname) as the original's help asks: not empty, no blanks; no `/` (key names). */
export function checkName(what: string, text: string): string {
  if (text === '' || /\s/.test(text) || text.includes('/')) throw usage(`${what} "${text}" must not be empty or contain blanks or "/"`);
  return text;
}

/** `--mtu`: an integer 576–65535 ("" = the nodes' maximum). */
export function parseMtu(text: string): number | null {
  if (text === '') return null;
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < 576 || n > 65535) throw usage(`--mtu "${text}" is not an MTU: an integer 576–65535, or "" for the nodes' maximum`);
  return n;
}

/** `--dns-server` values: addresses or host names, no commas (the key is a comma-separated list). */
export function parseNameServers(values: readonly string[]): string[] {
  for (const v of values) if (v === '' || v.includes(',') || /\s/.test(v)) throw usage(`--dns-server "${v}" must be one address or name`);
  return [...values];
}

/** `<vni>` of `network add`. */
export function parseVni(text: string, type: NetworkType): number {
  const v = checkVni(text, type);
  if (!v.ok) throw usage(v.why);
  return v.value;
}

/**
 * Checks a whole set of settings (the result of `add`, or of `modify` merged onto the stored
 * ones) and returns it normalised: an IPv6 gateway defaults to `<prefix>1`, as the original does.
 */
export function checkSettings(s: NetworkSettings): NetworkSettings {
  checkName('description', s.description);
  const out = { ...s };
  if (s.type === 'bridged') {
    const set = [['--ipnet', s.ip4Network], ['--gateway', s.ip4Gateway], ['--ipnet6', s.ip6Network], ['--gateway6', s.ip6Gateway]].filter(([, v]) => v !== null);
    if (set.length > 0 || s.dhcp4) {
      throw usage(`bridged network ${s.vni}: ${[...set.map(([o]) => o), ...(s.dhcp4 ? ['--dhcp'] : [])].join(', ')} apply to managed networks only (a bridged network is a plain VLAN bridge)`);
    }
  }
  if (s.ip4Network !== null) {
    const net = checkCidr(s.ip4Network, 4);
    if (!net.ok) throw usage(`--ipnet: ${net.why}`);
    if (s.ip4Gateway === null) throw usage(`--ipnet ${s.ip4Network} needs --gateway (the address the primary serves the network on)`);
    const gw = checkGateway(net.value, s.ip4Network, s.ip4Gateway);
    if (!gw.ok) throw usage(`--gateway: ${gw.why}`);
  } else if (s.ip4Gateway !== null) {
    throw usage(`--gateway ${s.ip4Gateway} needs an IPv4 network (--ipnet)`);
  }
  checkDhcp(s);
  if (s.ip6Network !== null) {
    const net = checkCidr(s.ip6Network, 6);
    if (!net.ok) throw usage(`--ipnet6: ${net.why}`);
    out.ip6Gateway = s.ip6Gateway ?? defaultIp6Gateway(s.ip6Network);
    const gw = checkGateway(net.value, s.ip6Network, out.ip6Gateway);
    if (!gw.ok) throw usage(`--gateway6: ${gw.why}`);
  } else if (s.ip6Gateway !== null) {
    throw usage(`--gateway6 ${s.ip6Gateway} needs an IPv6 network (--ipnet6)`);
  }
  return out;
}

function checkDhcp(s: NetworkSettings): void {
  if (s.dhcp4) {
    if (s.dhcp4Start === null || s.dhcp4End === null) throw usage('DHCPv4 start and end addresses are required for a DHCPv4-enabled network (--dhcp-start, --dhcp-end)');
    if (s.ip4Network === null) throw usage('--dhcp needs an IPv4 network (--ipnet)');
  }
  for (const [opt, v] of [['--dhcp-start', s.dhcp4Start], ['--dhcp-end', s.dhcp4End]] as const) {
    if (v !== null && !checkIp(v, 4).ok) throw usage(`${opt} "${v}" is not an IPv4 address`);
  }
  if (s.ip4Network !== null && s.dhcp4Start !== null && s.dhcp4End !== null) {
    const net = checkCidr(s.ip4Network, 4);
    if (net.ok) {
      const r = checkDhcpRange(net.value, s.ip4Network, s.dhcp4Start, s.dhcp4End);
      if (!r.ok) throw usage(r.why);
    }
  }
}
