/**
 * Value checks for single keys. Each check either accepts (and normalises) a raw YAML value or
 * names what it expected; the phrase becomes `expected <phrase>, got <value>` in a problem.
 *
 * @module
 */
import { formatCidr, isDomainName, isHostOrIpv4, isNetworkAddress, isShortHostname, networkOf, parseCidr, parseIpv4 } from './formats.js';
import type { AddressSpec, FenceAction, HypervisorDomainType, TargetSelector } from './types.js';

/** The outcome of checking one raw value. */
export type CheckResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly expected: string };

/** A check of one raw value. */
export type Check<T> = (raw: unknown) => CheckResult<T>;

const ok = <T>(value: T): CheckResult<T> => ({ ok: true, value });
const no = (expected: string): CheckResult<never> => ({ ok: false, expected });

/** Accepts a string of at least one non-blank character. */
export const nonEmptyString: Check<string> = (raw) =>
  typeof raw === 'string' && raw.trim() !== '' ? ok(raw) : no('a non-empty string');

/** Narrows {@link nonEmptyString} with a format test, using a second phrase for a bad format. */
function formatted(expected: string, test: (s: string) => boolean): Check<string> {
  return (raw) => {
    const s = nonEmptyString(raw);
    if (!s.ok) return s;
    return test(s.value) ? s : no(expected);
  };
}

/** YAML booleans, plus the Python-style strings `"True"`/`"False"` of the original sample. */
export const boolean: Check<boolean> = (raw) => {
  if (typeof raw === 'boolean') return ok(raw);
  if (raw === 'True' || raw === 'true') return ok(true);
  if (raw === 'False' || raw === 'false') return ok(false);
  return no('true or false');
};

/** Integers in [min, max]; decimal digit strings are accepted too, as Python's `int()` would. */
export function integer(min: number, max = Number.MAX_SAFE_INTEGER, phrase?: string): Check<number> {
  const expected = phrase ?? (max === Number.MAX_SAFE_INTEGER ? `an integer ≥ ${min}` : `an integer from ${min} to ${max}`);
  return (raw) => {
    const n = typeof raw === 'string' && /^[0-9]+$/.test(raw) ? Number(raw) : raw;
    return typeof n === 'number' && Number.isInteger(n) && n >= min && n <= max ? ok(n) : no(expected);
  };
}

/** TCP/UDP port numbers. */
export const port = integer(1, 65535, 'a port number from 1 to 65535');

/** Link MTUs within the limits Linux accepts. */
export const mtu = integer(68, 65535, 'an MTU from 68 to 65535');

/** The node's own name and coordinator names: one DNS label. */
export const shortHostname = formatted('a short hostname (letters, digits and hyphens, no dots)', isShortHostname);

/** Database and IPMI hosts. */
export const hostOrIp = formatted('a hostname or IPv4 address', isHostOrIpv4);

/** Linux interface names (IFNAMSIZ allows 15 characters). */
export const deviceName = formatted('a network device name (1 to 15 characters, no spaces or slashes)', (s) =>
  /^[^\s/:]{1,15}$/.test(s),
);

/** Directories must be absolute so the daemons do not depend on their working directory. */
export const absolutePath = formatted('an absolute path', (s) => s.startsWith('/'));

/** A libvirt connection URI such as `qemu+tcp://pvchv1/system` or `qemu:///system`. */
export const libvirtUri = formatted('a libvirt URI such as qemu+tcp://host/system', (s) =>
  /^[a-z][a-z0-9+]*:\/\/[^\s]*$/.test(s),
);

const isNone = (raw: unknown): boolean => raw === null || raw === 'None' || raw === 'none';

/** A domain name, or `None`/`none`/null for no domain (normalised to null). */
export const domainOrNone: Check<string | null> = (raw) => {
  if (isNone(raw)) return ok(null);
  return typeof raw === 'string' && isDomainName(raw) ? ok(raw) : no('a domain name or None');
};

/** A bare IPv4 address. */
export const ipv4: Check<string> = (raw) =>
  typeof raw === 'string' && parseIpv4(raw) !== undefined ? ok(raw) : no('an IPv4 address such as 10.0.0.1');

/** An IPv4 address with its prefix length, e.g. a floating IP `10.255.0.254/24`. */
export const ipv4WithPrefix: Check<string> = (raw) =>
  typeof raw === 'string' && parseCidr(raw) !== undefined
    ? ok(raw)
    : no('an IPv4 address with a prefix length, such as 10.0.0.254/24');

/** An IPv4 network with no host bits set (Python's strict `ip_network`). */
export const ipv4Network: Check<string> = (raw) => {
  const cidr = typeof raw === 'string' ? parseCidr(raw) : undefined;
  if (cidr === undefined) return no('an IPv4 network in CIDR form, such as 10.0.0.0/24');
  if (!isNetworkAddress(cidr)) return no(`a network address with no host bits set (${formatCidr(networkOf(cidr))})`);
  return ok(raw as string);
};

/** A node network `address`: `None`, `by-id`, or a static address with prefix length. */
export const addressSpec: Check<AddressSpec> = (raw) => {
  if (isNone(raw)) return ok({ kind: 'none' });
  if (raw === 'by-id') return ok({ kind: 'by-id' });
  if (typeof raw === 'string' && parseCidr(raw) !== undefined) return ok({ kind: 'static', cidr: raw });
  return no('None, by-id or an IPv4 address with a prefix length, such as 10.0.0.1/24');
};

/** Builds a check accepting exactly the listed strings. */
export function oneOf<T extends string>(values: readonly T[]): Check<T> {
  const expected = `one of ${values.join(', ')}`;
  return (raw) => (typeof raw === 'string' && (values as readonly string[]).includes(raw) ? ok(raw as T) : no(expected));
}

/** The VM placement algorithms of `target_selector`. */
export const targetSelector = oneOf<TargetSelector>(['mem', 'memprov', 'vcpus', 'load', 'vms']);

/** Libvirt domain types: `kvm` on real hosts, `qemu` (TCG emulation) in nested test clusters. */
export const domainType = oneOf<HypervisorDomainType>(['kvm', 'qemu']);

/** Post-fence actions: `migrate`, or `None`/`none`/null, normalised to `'none'`. */
export const fenceAction: Check<FenceAction> = (raw) => {
  if (raw === 'migrate') return ok('migrate');
  return isNone(raw) ? ok('none') : no('one of migrate, None');
};
