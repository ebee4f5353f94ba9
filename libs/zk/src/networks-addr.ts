import { isIPv6 } from 'node:net';
import type { NetworkType } from './vocab.js';

/**
 * Checks of the values a client network is made of (`/networks/<vni>`, inventory §1.4): VNI,
 * addresses, CIDR networks, gateways, DHCP ranges and MACs. Shared by the tree reader (bad data
 * written by another tool) and the `pvc network` guards, so both refuse the same things. Each
 * check returns a result or the reason, never throws.
 */

/** A checked value, or why it is not one (a phrase: `"10.0.0.300" is not an IPv4 address`). */
export type Checked<T> = { ok: true; value: T } | { ok: false; why: string };

const ok = <T>(value: T): Checked<T> => ({ ok: true, value });
const bad = <T>(why: string): Checked<T> => ({ ok: false, why });

/** The VXLAN identifier range (24 bits; 0 is not used). */
export const VNI_MIN = 1;
export const VNI_MAX = 16_777_215;
/** A bridged network's VNI is its 802.1Q VLAN id (0 and 4095 are reserved). */
export const VLAN_MAX = 4094;

/**
 * A VNI as text (a `/networks` child name or a command argument). The original accepts any digits
 * and leaves the range to `ip link` on every node (which then fails there); we refuse up front
 * what the kernel would refuse: 1–16777215, and 1–4094 for a bridged network (a VLAN id).
 */
export function checkVni(text: string, type?: NetworkType): Checked<number> {
  if (!/^\d+$/.test(text) || (text.length > 1 && text.startsWith('0'))) return bad(`VNI "${text}" is not a number`);
  const vni = Number(text);
  const max = type === 'bridged' ? VLAN_MAX : VNI_MAX;
  if (vni < VNI_MIN || vni > max) {
    return bad(`VNI ${text} is out of range: ${type === 'bridged' ? 'a bridged network is a VLAN, 1–4094' : `1–${VNI_MAX}`}`);
  }
  return ok(vni);
}

/** An IP address: its family and value. */
export interface IpAddress {
  family: 4 | 6;
  value: bigint;
}

/** A CIDR network: family, network address and prefix length. */
export interface Cidr {
  family: 4 | 6;
  network: bigint;
  prefix: number;
}

const bits = (family: 4 | 6): number => (family === 4 ? 32 : 128);

function parseIp4(text: string): bigint | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let v = 0n;
  for (const p of parts) {
    // Leading zeros are refused, as Python's ipaddress does (they read as octal elsewhere).
    if (!/^\d{1,3}$/.test(p) || (p.length > 1 && p.startsWith('0')) || Number(p) > 255) return undefined;
    v = (v << 8n) | BigInt(p);
  }
  return v;
}

function parseIp6(text: string): bigint | undefined {
  if (!isIPv6(text) || text.includes('%')) return undefined;
  let body = text;
  const lastColon = body.lastIndexOf(':');
  if (body.slice(lastColon + 1).includes('.')) {
    // An embedded IPv4 tail (`::ffff:10.0.0.1`) is two groups.
    const v4 = parseIp4(body.slice(lastColon + 1));
    if (v4 === undefined) return undefined;
    body = `${body.slice(0, lastColon + 1)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head = '', rest] = body.split('::');
  const groups = (s: string): bigint[] => (s === '' ? [] : s.split(':').map((g) => BigInt(`0x${g}`)));
  const h = groups(head);
  const r = rest === undefined ? [] : groups(rest);
  const all = rest === undefined ? h : [...h, ...Array<bigint>(Math.max(0, 8 - h.length - r.length)).fill(0n), ...r];
  if (all.length !== 8) return undefined;
  return all.reduce((acc, g) => (acc << 16n) | g, 0n);
}

/** An IPv4 (dotted quad) or IPv6 address; `family` restricts it to one. */
export function checkIp(text: string, family?: 4 | 6): Checked<IpAddress> {
  const v4 = family === 6 ? undefined : parseIp4(text);
  if (v4 !== undefined) return ok({ family: 4, value: v4 });
  const v6 = family === 4 ? undefined : parseIp6(text);
  if (v6 !== undefined) return ok({ family: 6, value: v6 });
  return bad(`"${text}" is not an ${family === 4 ? 'IPv4 ' : family === 6 ? 'IPv6 ' : 'IP '}address`);
}

/**
 * A network in CIDR form (`10.1.0.0/24`, `fd00:1::/64`). Host bits must be zero, as Python's
 * `ip_network` requires by default: `10.1.0.1/24` is refused, naming `10.1.0.0/24`.
 */
export function checkCidr(text: string, family?: 4 | 6): Checked<Cidr> {
  const what = family === 4 ? 'an IPv4 network' : family === 6 ? 'an IPv6 network' : 'a network';
  const slash = text.indexOf('/');
  if (slash < 0) return bad(`"${text}" is not ${what} in CIDR form (address/prefix)`);
  const addr = checkIp(text.slice(0, slash), family);
  const prefixText = text.slice(slash + 1);
  if (!addr.ok || !/^\d{1,3}$/.test(prefixText)) return bad(`"${text}" is not ${what} in CIDR form (address/prefix)`);
  const { family: f, value } = addr.value;
  const prefix = Number(prefixText);
  if (prefix > bits(f)) return bad(`"${text}": the prefix /${prefix} is longer than ${bits(f)} bits`);
  const hostMask = (1n << BigInt(bits(f) - prefix)) - 1n;
  if ((value & hostMask) !== 0n) {
    return bad(`"${text}" has host bits set (the network is ${formatIp(f, value & ~hostMask)}/${prefix})`);
  }
  return ok({ family: f, network: value, prefix });
}

/** Whether `ip` lies in `net`. */
export function cidrContains(net: Cidr, ip: IpAddress): boolean {
  if (net.family !== ip.family) return false;
  const shift = BigInt(bits(net.family) - net.prefix);
  return ip.value >> shift === net.network >> shift;
}

/** The last address of a network (IPv4 broadcast). */
function lastOf(net: Cidr): bigint {
  return net.network | ((1n << BigInt(bits(net.family) - net.prefix)) - 1n);
}

/** Whether `ip` is a usable host address of `net`: inside it, not its network address and, for IPv4 up to /30, not its broadcast. */
function isHostOf(net: Cidr, ip: IpAddress): boolean {
  if (!cidrContains(net, ip)) return false;
  if (net.family === 4 && net.prefix >= 31) return true;
  return ip.value !== net.network && (net.family === 6 || ip.value !== lastOf(net));
}

/** A gateway address of `net`: a host address inside it (the network's own address and the IPv4 broadcast are refused). */
export function checkGateway(net: Cidr, netText: string, gateway: string): Checked<IpAddress> {
  const gw = checkIp(gateway, net.family);
  if (!gw.ok) return bad(`gateway ${gw.why}`);
  if (!isHostOf(net, gw.value)) return bad(`gateway ${gateway} is not a host address inside ${netText}`);
  return gw;
}

/** A DHCPv4 range: both ends host addresses inside `net`, start ≤ end. */
export function checkDhcpRange(net: Cidr, netText: string, start: string, end: string): Checked<{ start: IpAddress; end: IpAddress }> {
  const s = checkIp(start, 4);
  const e = checkIp(end, 4);
  if (!s.ok) return bad(`DHCP start ${s.why}`);
  if (!e.ok) return bad(`DHCP end ${e.why}`);
  if (net.family !== 4) return bad(`a DHCPv4 range needs an IPv4 network, not ${netText}`);
  for (const [what, text, v] of [['start', start, s.value], ['end', end, e.value]] as const) {
    if (!isHostOf(net, v)) return bad(`DHCP ${what} ${text} is not a host address inside ${netText}`);
  }
  if (s.value.value > e.value.value) return bad(`DHCP start ${start} is after the end ${end}`);
  return ok({ start: s.value, end: e.value });
}

const MAC_RE = /^[0-9a-f]{2}(?::[0-9a-f]{2}){5}$/;

/** A MAC address, `:`-separated, returned lower-cased (the form the original stores and names keys by). */
export function checkMac(text: string): Checked<string> {
  const mac = text.toLowerCase();
  if (!MAC_RE.test(mac)) return bad(`MAC address "${text}" is not valid: six hex pairs separated by ":"`);
  return ok(mac);
}

/** The default IPv6 gateway of a network, as the original builds it: `<address part>1` (`fd00:1::/64` → `fd00:1::1`). */
export function defaultIp6Gateway(ip6Network: string): string {
  return `${ip6Network.split('/')[0] ?? ''}1`;
}

/** An address in its usual text form (IPv4 dotted; IPv6 groups without leading zeros, uncompressed). */
export function formatIp(family: 4 | 6, value: bigint): string {
  if (family === 4) return [24n, 16n, 8n, 0n].map((s) => String((value >> s) & 0xffn)).join('.');
  const groups: string[] = [];
  for (let s = 112n; s >= 0n; s -= 16n) groups.push(((value >> s) & 0xffffn).toString(16));
  return groups.join(':');
}
