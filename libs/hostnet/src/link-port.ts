import { PvcError } from '@pvc/runtime';

/** One network link as the kernel reports it (`ip -json -d link show`). */
export interface LinkState {
  readonly name: string;
  readonly mtu: number;
  /** Administratively up (the `UP` flag), whatever the carrier. */
  readonly up: boolean;
  /**
   * Up and passing traffic (no `NO-CARRIER`). A bridge has carrier only once one of its ports is
   * forwarding, about a second after it comes up even with no forward delay (the kernel's link
   * watch); a frame sent before that is dropped.
   */
  readonly carrier: boolean;
  /** The bridge (or bond) this link is a port of. */
  readonly master?: string | undefined;
  /** `bridge`, `veth`, `vxlan`…; undefined for a plain physical device. */
  readonly kind?: string | undefined;
}

/** One IPv4 address on a link (`ip -json -4 addr show`). */
export interface AddressState {
  readonly device: string;
  readonly ip: string;
  readonly prefix: number;
}

/** One IPv4 default route of the main table (`ip -json -4 route show default`). */
export interface RouteState {
  readonly gateway?: string | undefined;
  readonly device?: string | undefined;
  readonly metric?: number | undefined;
}

/**
 * One change to the kernel's links, addresses or routes. Nothing here deletes: the port can only
 * add and set, so no caller can drop an address or route in use (floating addresses are netd's).
 */
export type LinkOp =
  | { readonly kind: 'add-bridge'; readonly bridge: string }
  | { readonly kind: 'set-master'; readonly device: string; readonly bridge: string }
  | { readonly kind: 'set-mtu'; readonly device: string; readonly mtu: number }
  | { readonly kind: 'set-up'; readonly device: string }
  | { readonly kind: 'add-address'; readonly device: string; readonly cidr: string }
  | { readonly kind: 'replace-default-route'; readonly gateway: string; readonly device: string };

/**
 * The `ip` arguments performing an op: what the real adapter runs and what the logs show. Bridges
 * are created with STP off and no forward delay, so their ports forward at once.
 */
export function ipArgs(op: LinkOp): string[] {
  switch (op.kind) {
    case 'add-bridge':
      return ['link', 'add', op.bridge, 'type', 'bridge', 'stp_state', '0', 'forward_delay', '0'];
    case 'set-master':
      return ['link', 'set', op.device, 'master', op.bridge];
    case 'set-mtu':
      return ['link', 'set', op.device, 'mtu', String(op.mtu)];
    case 'set-up':
      return ['link', 'set', op.device, 'up'];
    case 'add-address':
      return ['address', 'add', op.cidr, 'dev', op.device];
    case 'replace-default-route':
      return ['route', 'replace', 'default', 'via', op.gateway, 'dev', op.device];
  }
}

/** The command line of an op, for logs: `ip link set ens4 mtu 9000`. */
export function describeLinkOp(op: LinkOp): string {
  return ['ip', ...ipArgs(op)].join(' ');
}

/** Result of a duplicate address probe. */
export type AddressProbe = { readonly inUse: false } | { readonly inUse: true; readonly by?: string | undefined };

/**
 * Why the kernel refused an op (or a read failed): `NO_DEVICE` (no such link), `MTU_REFUSED`
 * (the device does not take that MTU), `EXISTS` (the bridge or address is already there),
 * `REFUSED` (anything else the kernel or the tool said no to, e.g. a gateway outside every
 * connected network), `PROBE_FAILED` (the duplicate address probe could not run).
 */
export type LinkErrorCode = 'NO_DEVICE' | 'MTU_REFUSED' | 'EXISTS' | 'REFUSED' | 'PROBE_FAILED';

/** A failed port call; `detail` is the tool's own message (`Cannot find device "ens9"`). */
export class LinkError extends PvcError {
  readonly reason: LinkErrorCode;
  readonly detail: string;
  constructor(reason: LinkErrorCode, what: string, detail: string, cause?: unknown) {
    super(`LINK_${reason}`, `${what}: ${detail}`, { cause, retryable: false });
    this.reason = reason;
    this.detail = detail;
  }
}

/**
 * The port to the kernel's links, IPv4 addresses and default routes. Real adapter:
 * {@link createIpLinks} (`ip -json` and `arping` through Exec); fake: {@link FakeLinks}. Every
 * method rejects with a {@link LinkError} when the kernel or the tool refuses.
 */
export interface LinkPort {
  links(): Promise<LinkState[]>;
  /** IPv4 addresses only (IPv6 link-local addresses are the kernel's business). */
  addresses(): Promise<AddressState[]>;
  defaultRoutes(): Promise<RouteState[]>;
  apply(op: LinkOp): Promise<void>;
  /**
   * Duplicate address detection: asks, from `device` (which must be up), whether another host
   * already answers for `ip`, without using `ip` as a sender address (RFC 5227 probe). A host that
   * does not answer ARP within the probe's second is not seen, nor is any host while `device` has
   * no carrier.
   */
  probeAddress(device: string, ip: string): Promise<AddressProbe>;
}
