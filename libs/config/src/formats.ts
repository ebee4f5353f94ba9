/**
 * Pure syntax helpers for the values in `pvcnoded.yaml`: IPv4 addresses, CIDR blocks, host and
 * domain names. IPv4 addresses are handled as unsigned 32-bit numbers.
 *
 * @module
 */

/** An IPv4 address with a prefix length, e.g. `10.255.0.1/24`. */
export interface Ipv4Cidr {
  /** The address as an unsigned 32-bit number. */
  readonly ip: number;
  /** Prefix length, 0–32. */
  readonly prefix: number;
}

const OCTET = /^(0|[1-9][0-9]{0,2})$/;

/** Parses a dotted-quad IPv4 address (no leading zeros, like Python's `ipaddress`). */
export function parseIpv4(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let n = 0;
  for (const part of parts) {
    if (!OCTET.test(part)) return undefined;
    const octet = Number(part);
    if (octet > 255) return undefined;
    n = n * 256 + octet;
  }
  return n;
}

/** Formats an unsigned 32-bit number as a dotted quad. */
export function formatIpv4(ip: number): string {
  return [ip >>> 24, (ip >>> 16) & 255, (ip >>> 8) & 255, ip & 255].join('.');
}

/** Parses `a.b.c.d/n` with n in 0–32; anything else (including a bare address) is undefined. */
export function parseCidr(text: string): Ipv4Cidr | undefined {
  const m = /^([0-9.]+)\/(0|[1-9][0-9]?)$/.exec(text);
  if (!m || m[1] === undefined || m[2] === undefined) return undefined;
  const ip = parseIpv4(m[1]);
  const prefix = Number(m[2]);
  if (ip === undefined || prefix > 32) return undefined;
  return { ip, prefix };
}

/** Formats a CIDR value back to `a.b.c.d/n`. */
export function formatCidr(cidr: Ipv4Cidr): string {
  return `${formatIpv4(cidr.ip)}/${cidr.prefix}`;
}

function maskOf(prefix: number): number {
  return prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
}

/** The network address of a CIDR value (host bits cleared). */
export function networkOf(cidr: Ipv4Cidr): Ipv4Cidr {
  return { ip: (cidr.ip & maskOf(cidr.prefix)) >>> 0, prefix: cidr.prefix };
}

/** Whether a CIDR value has no host bits set, i.e. names a network rather than an interface. */
export function isNetworkAddress(cidr: Ipv4Cidr): boolean {
  return networkOf(cidr).ip === cidr.ip;
}

/**
 * The usable host addresses of a network, as Python's `ip_network(...).hosts()` counts them:
 * a /32 has its one address, a /31 both, anything larger excludes network and broadcast.
 */
export function hostRange(network: Ipv4Cidr): { first: number; count: number } {
  const base = networkOf(network).ip;
  const size = 2 ** (32 - network.prefix);
  if (network.prefix >= 31) return { first: base, count: size };
  return { first: base + 1, count: size - 2 };
}

/** The n-th (1-based) host address of a network, or undefined when n is outside the host range. */
export function nthHost(network: Ipv4Cidr, n: number): number | undefined {
  const { first, count } = hostRange(network);
  if (!Number.isInteger(n) || n < 1 || n > count) return undefined;
  return first + n - 1;
}

/** Whether an address is one of the network's usable host addresses. */
export function isHostIn(network: Ipv4Cidr, ip: number): boolean {
  const { first, count } = hostRange(network);
  return ip >= first && ip < first + count;
}

const LABEL = /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/** A single DNS label: letters, digits and inner hyphens, 1–63 characters, no dots. */
export function isShortHostname(text: string): boolean {
  return LABEL.test(text);
}

/** One or more DNS labels joined by dots, at most 253 characters, no trailing dot. */
export function isDomainName(text: string): boolean {
  return text.length <= 253 && text.split('.').every((label) => LABEL.test(label));
}

/** A host name (short or fully qualified) or a dotted-quad IPv4 address. */
export function isHostOrIpv4(text: string): boolean {
  return parseIpv4(text) !== undefined || (isDomainName(text) && !/^[0-9.]+$/.test(text));
}

/**
 * The node number used by `by-id` addressing: the digits at the end of the node name
 * (`pvchv1` → 1, `hv012` → 12), or undefined when the name does not end in a digit.
 */
export function trailingNumber(name: string): number | undefined {
  const m = /([0-9]+)$/.exec(name);
  return m?.[1] === undefined ? undefined : Number(m[1]);
}
