/**
 * Rules that span several keys. They read the raw document through the same checks as the
 * schema and skip any rule whose inputs are themselves invalid (the schema reports those), so
 * every problem is reported once, and all of them in one pass.
 *
 * @module
 */
import * as c from './checks.js';
import type { Check, CheckResult } from './checks.js';
import type { ConfigProblem } from './errors.js';
import { formatCidr, formatIpv4, hostRange, isHostIn, nthHost, parseCidr, trailingNumber } from './formats.js';
import { expectedProblem, valueAt } from './problems.js';
import { NETWORK_NAMES } from './types.js';
import type { AddressSpec, ResolvedAddress } from './types.js';

/** The value at `path` if present and valid under `check`, else undefined. */
function checked<T>(raw: unknown, path: readonly string[], check: Check<T>): T | undefined {
  const value = valueAt(raw, path);
  if (value === undefined) return undefined;
  const r = check(value);
  return r.ok ? r.value : undefined;
}

/**
 * The address a node uses on one network. `by-id` takes the N-th host address of the cluster
 * network, N being the trailing digits of the node name (`pvchv1` → `.1`). The original took the
 * last digit run anywhere in the name and, for N = 0, silently wrapped to the last host
 * (`hosts()[-1]`); both are rejected here. Static addresses must be host addresses of the network.
 */
export function resolveNodeAddress(
  spec: AddressSpec,
  network: string | undefined,
  node: string,
): CheckResult<ResolvedAddress | null> {
  const net = network === undefined ? undefined : parseCidr(network);
  if (spec.kind === 'none') return { ok: true, value: null };
  if (spec.kind === 'static') {
    const cidr = parseCidr(spec.cidr);
    if (cidr === undefined) return { ok: false, expected: 'an IPv4 address with a prefix length' };
    if (net !== undefined && !isHostIn(net, cidr.ip)) {
      return { ok: false, expected: `a host address of ${formatCidr(net)}` };
    }
    return { ok: true, value: { ip: formatIpv4(cidr.ip), prefix: cidr.prefix, cidr: formatCidr(cidr) } };
  }
  if (net === undefined) return { ok: true, value: null };
  const id = trailingNumber(node);
  if (id === undefined) {
    return { ok: false, expected: `None or a static address (by-id needs pvc.node to end in digits; "${node}" does not)` };
  }
  const ip = nthHost(net, id);
  if (ip === undefined) {
    const { count } = hostRange(net);
    return {
      ok: false,
      expected: `a node number from 1 to ${count} for by-id in ${formatCidr(net)} (pvc.node "${node}" gives ${id})`,
    };
  }
  return { ok: true, value: { ip: formatIpv4(ip), prefix: net.prefix, cidr: `${formatIpv4(ip)}/${net.prefix}` } };
}

/** `depends`: with networking enabled, the networks, node interfaces and coordinator databases are required. */
function networkingDepends(raw: unknown): ConfigProblem[] {
  if (checked(raw, ['pvc', 'functions', 'enable_networking'], c.boolean) !== true) return [];
  const required = [
    ['pvc', 'cluster', 'networks'],
    ['pvc', 'coordinator'],
    ['pvc', 'system', 'configuration', 'networking'],
  ];
  const isMapping = (v: unknown): boolean => v !== null && typeof v === 'object' && !Array.isArray(v);
  // A missing or malformed parent is already a schema problem; the child is reported only under a valid parent.
  return required
    .filter((path) => isMapping(valueAt(raw, path.slice(0, -1))) && valueAt(raw, path) === undefined)
    .map((path) => expectedProblem(raw, path, 'a mapping (required when pvc.functions.enable_networking is true)'));
}

/** Each coordinator may be listed once. */
function uniqueCoordinators(raw: unknown): ConfigProblem[] {
  const list = valueAt(raw, ['pvc', 'cluster', 'coordinators']);
  if (!Array.isArray(list)) return [];
  const seen = new Set<string>();
  const out: ConfigProblem[] = [];
  list.forEach((name: unknown, i) => {
    if (typeof name !== 'string' || !c.shortHostname(name).ok) return;
    if (seen.has(name)) out.push(expectedProblem(raw, ['pvc', 'cluster', 'coordinators', i], 'a coordinator not already listed'));
    seen.add(name);
  });
  return out;
}

/** Floating IPs and node addresses must be host addresses of their cluster network. */
function networkAddresses(raw: unknown): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  const node = checked(raw, ['pvc', 'node'], c.shortHostname);
  for (const name of NETWORK_NAMES) {
    const netPath = ['pvc', 'cluster', 'networks', name];
    const network = checked(raw, [...netPath, 'network'], c.ipv4Network);
    const floating = checked(raw, [...netPath, 'floating_ip'], c.ipv4WithPrefix);
    const net = network === undefined ? undefined : parseCidr(network);
    const fip = floating === undefined ? undefined : parseCidr(floating);
    if (net !== undefined && fip !== undefined && !isHostIn(net, fip.ip)) {
      out.push(expectedProblem(raw, [...netPath, 'floating_ip'], `a host address of ${formatCidr(net)}`));
    }
    const addrPath = ['pvc', 'system', 'configuration', 'networking', name, 'address'];
    const spec = checked(raw, addrPath, c.addressSpec);
    const networkGiven = valueAt(raw, [...netPath, 'network']) !== undefined;
    // An invalid network or node name is reported by the schema; judging addresses against it would double-report.
    if (spec === undefined || node === undefined || (networkGiven && network === undefined)) continue;
    const r = resolveNodeAddress(spec, network, node);
    if (!r.ok) out.push(expectedProblem(raw, addrPath, r.expected));
  }
  return out;
}

/**
 * No two networks may give the same floating address (e.g. cluster and storage sharing one subnet
 * and one `floating_ip`): the primary would put one address on two bridges, and relinquishing one
 * network's address would take the other's with it. The later network in file order is reported;
 * the prefix length does not matter, the address does.
 */
function distinctFloatingIps(raw: unknown): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  const seen = new Map<number, string>();
  for (const name of NETWORK_NAMES) {
    const path = ['pvc', 'cluster', 'networks', name, 'floating_ip'];
    const floating = checked(raw, path, c.ipv4WithPrefix);
    const fip = floating === undefined ? undefined : parseCidr(floating);
    if (fip === undefined) continue;
    const first = seen.get(fip.ip);
    if (first !== undefined) {
      out.push(expectedProblem(raw, path, `an address other than the floating_ip of the ${first} network (${formatIpv4(fip.ip)})`));
    } else {
      seen.set(fip.ip, name);
    }
  }
  return out;
}

/**
 * Migrating VMs after a *failed* fence clears their RBD locks while the node may still run them;
 * the manual requires `suicide_intervals` so the node at least tries to kill itself first.
 */
function failedFenceNeedsSuicide(raw: unknown): ConfigProblem[] {
  if (checked(raw, ['pvc', 'system', 'fencing', 'actions', 'failed_fence'], c.fenceAction) !== 'migrate') return [];
  const path = ['pvc', 'system', 'fencing', 'intervals', 'suicide_intervals'];
  const value = valueAt(raw, path);
  const suicide = value === undefined ? 0 : checked(raw, path, c.integer(0));
  if (suicide !== 0) return [];
  return [expectedProblem(raw, path, 'an integer ≥ 1 when pvc.system.fencing.actions.failed_fence is migrate')];
}

/** Every cross-key problem of a raw document, in a stable order. */
export function crossKeyProblems(raw: unknown): ConfigProblem[] {
  return [
    ...networkingDepends(raw),
    ...uniqueCoordinators(raw),
    ...networkAddresses(raw),
    ...distinctFloatingIps(raw),
    ...failedFenceNeedsSuicide(raw),
  ];
}
