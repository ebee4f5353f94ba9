/**
 * Port to the client network devices of this host: observe the links, flooding entries and bridge
 * IPv6 settings, and apply one {@link DeviceAction}. The real adapter is {@link createIpDevices}
 * (`ip`, `bridge`, `sysctl` through Exec), the fake {@link FakeDevices}; one contract
 * (`testing/device-contract.ts`) runs against both.
 *
 * @module
 */
import { PvcError } from '@pvc/runtime';
import { OWNER_ALIAS, VXLAN_PORT, type DeviceAction, type ObservedDevices } from './model.js';

/**
 * Why a change failed: `UNSUPPORTED` (the kernel has no such device type: no 802.1Q VLANs on the
 * test machines), `NO_DEVICE` (a device it names does not exist), `MTU_REFUSED`, `EXISTS`,
 * `REFUSED` (anything else the kernel or tool refused), `UNAVAILABLE` (the tool could not run).
 */
export type ClientNetErrorCode = 'UNSUPPORTED' | 'NO_DEVICE' | 'MTU_REFUSED' | 'EXISTS' | 'REFUSED' | 'UNAVAILABLE';

/** A failed observation or change; a change's message names its network and device. */
export class ClientNetError extends PvcError {
  readonly reason: ClientNetErrorCode;
  readonly vni: number | undefined;
  readonly device: string | undefined;
  constructor(reason: ClientNetErrorCode, message: string, o: { vni?: number; device?: string; cause?: unknown } = {}) {
    super(`CLIENTNET_${reason}`, message, { cause: o.cause, retryable: reason === 'UNAVAILABLE' });
    this.reason = reason;
    this.vni = o.vni;
    this.device = o.device;
  }
}

/** The port. */
export interface ClientDevicePort {
  /** Every link (with VXLAN/VLAN details), the flooding entries of `vxlan<n>` links, the bridges' IPv6 settings. */
  observe(): Promise<ObservedDevices>;
  /**
   * Applies one change. A created device carries {@link OWNER_ALIAS} when this resolves (a device
   * whose alias cannot be set is deleted again, so nothing unmarked is left behind). Appending a
   * flooding entry that exists, or deleting one that does not, is done; deleting a device that
   * does not exist is done. Rejects with a {@link ClientNetError} naming the network and device.
   */
  apply(action: DeviceAction): Promise<void>;
}

/** One command line: the tool and its arguments. */
export type Command = readonly [string, ...string[]];

/**
 * The commands performing an action, in order: what the real adapter runs and what logs show.
 * Bridges are made with STP off and no forward delay, as the host bridges (libs/hostnet). VXLANs
 * keep the kernel's MAC learning (the original's default): flooding goes to every other node by the
 * all-zeros entries, unicast to the node a MAC was last seen behind.
 */
export function commandsOf(a: DeviceAction): [Command, ...Command[]] {
  const alias: Command = ['ip', 'link', 'set', 'dev', a.device, 'alias', OWNER_ALIAS];
  switch (a.kind) {
    case 'create-vxlan':
      return [['ip', 'link', 'add', a.device, 'mtu', String(a.mtu), 'type', 'vxlan', 'id', String(a.vni), 'dstport', String(VXLAN_PORT), 'dev', a.lower], alias];
    case 'create-vlan':
      return [['ip', 'link', 'add', 'link', a.lower, 'name', a.device, 'mtu', String(a.mtu), 'type', 'vlan', 'id', String(a.vni)], alias];
    case 'create-bridge':
      return [['ip', 'link', 'add', a.device, 'mtu', String(a.mtu), 'type', 'bridge', 'stp_state', '0', 'forward_delay', '0'], alias];
    case 'set-mtu':
      return [['ip', 'link', 'set', 'dev', a.device, 'mtu', String(a.mtu)]];
    case 'set-master':
      return [['ip', 'link', 'set', 'dev', a.device, 'master', a.bridge]];
    case 'set-up':
      return [['ip', 'link', 'set', 'dev', a.device, 'up']];
    case 'set-ipv6':
      return [['sysctl', '-w', `net.ipv6.conf.${a.device}.${a.key}=${a.value}`]];
    case 'flood-add':
      return [['bridge', 'fdb', 'append', '00:00:00:00:00:00', 'dev', a.device, 'dst', a.dst]];
    case 'flood-del':
      return [['bridge', 'fdb', 'del', '00:00:00:00:00:00', 'dev', a.device, 'dst', a.dst]];
    case 'delete':
      return [['ip', 'link', 'del', 'dev', a.device]];
  }
}

/** An action for logs and error messages: `client network 100: ip link set dev vmbr100 mtu 1400`. */
export function describeAction(a: DeviceAction): string {
  return `client network ${a.vni}: ${commandsOf(a)[0].join(' ')}`;
}
