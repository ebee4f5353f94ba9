/**
 * The fake {@link AddressPort} (unit and simulation tests), with failure knobs. Its behaviour is
 * the contract in `testing/address-contract.ts`, also run against the real adapter.
 *
 * @module
 */
import { AddressError, ipOf, type AddressPort } from './address-port.js';

/** Knobs of {@link FakeAddresses}. */
export interface FakeAddressKnobs {
  /** Adding an address on this device is refused. */
  refuseAdd?: string;
  /** Removing an address from this device is refused. */
  refuseRemove?: string;
  /** Every call fails as if `ip` could not be run. */
  down?: boolean;
  /** announce fails. */
  failAnnounce?: boolean;
}

/** One operation done, for assertions (in order). */
export type AddressOp = { op: 'add' | 'remove' | 'announce'; what: string; device: string; at: number };

export class FakeAddresses implements AddressPort {
  readonly devices = new Map<string, string[]>();
  readonly ops: AddressOp[] = [];
  /** What the neighbours on the links hold: address → MAC, updated by announce. */
  readonly neighbours = new Map<string, string>();
  knobs: FakeAddressKnobs = {};

  constructor(devices: readonly string[] = [], private readonly now: () => number = () => 0) {
    for (const d of devices) this.devices.set(d, []);
  }

  /** The fake MAC of a device: stable, derived from its name. */
  macOf(device: string): string {
    let h = 0;
    for (const ch of device) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
    const b = [2, 0, (h >>> 24) & 255, (h >>> 16) & 255, (h >>> 8) & 255, h & 255];
    return b.map((x) => x.toString(16).padStart(2, '0')).join(':');
  }

  private dev(device: string): string[] {
    if (this.knobs.down) throw new AddressError('UNAVAILABLE', 'ip: not available (fake down)');
    const d = this.devices.get(device);
    if (!d) throw new AddressError('NO_DEVICE', `Device "${device}" does not exist.`);
    return d;
  }

  list(device: string): Promise<string[]> {
    return Promise.resolve().then(() => [...this.dev(device)]);
  }

  add(cidr: string, device: string): Promise<void> {
    return Promise.resolve().then(() => {
      const d = this.dev(device);
      if (this.knobs.refuseAdd === device) throw new AddressError('REFUSED', `add ${cidr} on ${device}: RTNETLINK answers: Operation not permitted`);
      if (!d.includes(cidr)) d.push(cidr);
      this.ops.push({ op: 'add', what: cidr, device, at: this.now() });
    });
  }

  remove(cidr: string, device: string): Promise<void> {
    return Promise.resolve().then(() => {
      if (this.knobs.down) throw new AddressError('UNAVAILABLE', 'ip: not available (fake down)');
      const d = this.devices.get(device);
      if (!d) return;
      if (this.knobs.refuseRemove === device) throw new AddressError('REFUSED', `remove ${cidr} from ${device}: RTNETLINK answers: Operation not permitted`);
      const i = d.indexOf(cidr);
      if (i >= 0) d.splice(i, 1);
      this.ops.push({ op: 'remove', what: cidr, device, at: this.now() });
    });
  }

  announce(ip: string, device: string): Promise<void> {
    return Promise.resolve().then(() => {
      const d = this.dev(device);
      if (this.knobs.failAnnounce) throw new AddressError('REFUSED', `announce ${ip} on ${device}: arping failed (fake)`);
      if (!d.some((c) => ipOf(c) === ip)) throw new AddressError('REFUSED', `announce ${ip} on ${device}: the address is not on the device`);
      this.neighbours.set(ip, this.macOf(device));
      this.ops.push({ op: 'announce', what: ip, device, at: this.now() });
    });
  }
}
