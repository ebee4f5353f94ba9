import type { HostNetworkProblem } from './errors.js';
import { GATEWAY_KEY, networkKey, type HostInterfacePlan, type PlanNote, type WantedBridge, type WantedRoute } from './interfaces.js';
import type { AddressState, LinkOp, LinkState, RouteState } from './link-port.js';

/** What the kernel has now. */
export interface ObservedInterfaces {
  readonly links: readonly LinkState[];
  readonly addresses: readonly AddressState[];
  readonly routes: readonly RouteState[];
}

/** One change to make, at the config key it follows. */
export interface InterfaceChange {
  readonly op: LinkOp;
  readonly key: string;
  readonly description: string;
}

/** The difference between the plan and the host ({@link diffHostInterfaces}). */
export interface InterfaceDiff {
  /** In order: every link change, then the addresses, then the default route. */
  readonly changes: readonly InterfaceChange[];
  /** Checked items already as configured. */
  readonly unchanged: number;
  /** Addresses on our bridges the configuration does not name: left alone (floating addresses are netd's). */
  readonly extras: readonly AddressState[];
  /** Things left alone that the log should mention. */
  readonly warnings: readonly PlanNote[];
  /** Problems that forbid any change (the plan's own, then missing devices and conflicts). */
  readonly problems: readonly HostNetworkProblem[];
}

interface Acc {
  links: InterfaceChange[];
  addresses: InterfaceChange[];
  route: InterfaceChange[];
  unchanged: number;
  extras: AddressState[];
  warnings: PlanNote[];
  problems: HostNetworkProblem[];
}

function check(acc: Acc, done: boolean, change: () => InterfaceChange, into: InterfaceChange[] = acc.links): void {
  if (done) acc.unchanged++;
  else into.push(change());
}

function preflight(b: WantedBridge, dev: LinkState | undefined, br: LinkState | undefined, acc: Acc): boolean {
  const key = networkKey(b.network, 'device');
  if (!dev) acc.problems.push({ code: 'HOSTNET_NO_DEVICE', key, message: `device "${b.device}" does not exist` });
  else if (dev.master !== undefined && dev.master !== b.bridge) {
    acc.problems.push({ code: 'HOSTNET_CONFLICT', key, message: `device "${b.device}" is a port of "${dev.master}", not of ${b.bridge}; it is not moved` });
  }
  if (br && br.kind !== 'bridge') {
    acc.problems.push({ code: 'HOSTNET_CONFLICT', key, message: `"${b.bridge}" exists and is not a bridge (${br.kind ?? 'a device'}); it is not replaced` });
  }
  return dev !== undefined;
}

function diffLinks(b: WantedBridge, dev: LinkState, br: LinkState | undefined, acc: Acc): void {
  const devKey = networkKey(b.network, 'device');
  const mtuKey = networkKey(b.network, 'mtu');
  check(acc, dev.mtu === b.mtu, () => ({ op: { kind: 'set-mtu', device: b.device, mtu: b.mtu }, key: mtuKey, description: `${b.device} MTU ${dev.mtu} → ${b.mtu}` }));
  check(acc, dev.up, () => ({ op: { kind: 'set-up', device: b.device }, key: devKey, description: `${b.device} up` }));
  // A new bridge gets its MTU set explicitly, so it no longer follows its ports' MTU on its own.
  check(acc, br !== undefined, () => ({ op: { kind: 'add-bridge', bridge: b.bridge }, key: devKey, description: `bridge ${b.bridge} created (STP off, no forward delay)` }));
  check(acc, dev.master === b.bridge, () => ({ op: { kind: 'set-master', device: b.device, bridge: b.bridge }, key: devKey, description: `${b.device} into ${b.bridge}` }));
  check(acc, br?.mtu === b.mtu, () => ({ op: { kind: 'set-mtu', device: b.bridge, mtu: b.mtu }, key: mtuKey, description: `${b.bridge} MTU ${br?.mtu ?? 'new'} → ${b.mtu}` }));
  check(acc, br?.up === true, () => ({ op: { kind: 'set-up', device: b.bridge }, key: devKey, description: `${b.bridge} up` }));
}

function diffAddresses(b: WantedBridge, observed: ObservedInterfaces, acc: Acc): void {
  const onBridge = observed.addresses.filter((a) => a.device === b.bridge);
  for (const w of b.addresses) {
    const key = networkKey(w.network, 'address');
    check(acc, onBridge.some((a) => a.ip === w.ip && a.prefix === w.prefix), () => ({
      op: { kind: 'add-address', device: b.bridge, cidr: w.cidr }, key, description: `${w.network} address ${w.cidr} on ${b.bridge}`,
    }), acc.addresses);
    for (const other of observed.addresses.filter((a) => a.ip === w.ip && a.device !== b.bridge)) {
      acc.warnings.push({ key, message: `${w.ip} is also on "${other.device}" (${other.ip}/${other.prefix}); left alone there` });
    }
  }
  acc.extras.push(...onBridge.filter((a) => !b.addresses.some((w) => w.ip === a.ip && w.prefix === a.prefix)));
}

function diffRoute(route: WantedRoute, routes: readonly RouteState[], acc: Acc): void {
  if (routes.some((r) => r.gateway === route.gateway && r.device === route.bridge)) {
    acc.unchanged++;
    return;
  }
  // `ip route replace default` replaces the metric-0 default route: one via another gateway is in use, not ours to drop.
  const other = routes.find((r) => (r.metric ?? 0) === 0 && r.gateway !== route.gateway);
  if (other) {
    acc.warnings.push({ key: GATEWAY_KEY, message: `a default route via ${other.gateway ?? '(none)'} dev ${other.device ?? '?'} exists; left alone, no default route via ${route.gateway}` });
    return;
  }
  acc.route.push({ op: { kind: 'replace-default-route', gateway: route.gateway, device: route.bridge }, key: GATEWAY_KEY, description: `default route via ${route.gateway} dev ${route.bridge}` });
}

/**
 * Compares the plan with what the kernel has and lists only what differs. Never a deletion:
 * addresses on our bridges that the configuration does not name are reported as `extras`, a
 * default route via another gateway is left alone with a warning, a device in another bridge or a
 * non-bridge link named like ours is a problem. A missing device is a problem (nothing is changed
 * then). Pure.
 */
export function diffHostInterfaces(plan: HostInterfacePlan, observed: ObservedInterfaces): InterfaceDiff {
  const acc: Acc = { links: [], addresses: [], route: [], unchanged: 0, extras: [], warnings: [], problems: [...plan.problems] };
  const link = (name: string): LinkState | undefined => observed.links.find((l) => l.name === name);
  for (const b of plan.bridges) {
    const dev = link(b.device);
    const br = link(b.bridge);
    if (!preflight(b, dev, br, acc) || !dev) continue;
    diffLinks(b, dev, br, acc);
    diffAddresses(b, observed, acc);
  }
  if (plan.route) diffRoute(plan.route, observed.routes, acc);
  const { unchanged, extras, warnings, problems } = acc;
  return { changes: [...acc.links, ...acc.addresses, ...acc.route], unchanged, extras, warnings, problems };
}
