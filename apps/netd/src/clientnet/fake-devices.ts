/**
 * The fake {@link ClientDevicePort} (unit and simulation tests), with failure knobs. It keeps the
 * kernel's rules the contract checks (`testing/device-contract.ts`, also run against the real
 * adapter): a VXLAN's MTU is at most its device's − 50, a VLAN's at most its device's; names are
 * unique; deleting a bridge frees its ports.
 *
 * @module
 */
import { ClientNetError, type ClientDevicePort } from './device-port.js';
import { OWNER_ALIAS, VXLAN_OVERHEAD, VXLAN_PORT, type DeviceAction, type Ipv6Settings, type ObservedDevices, type ObservedLink } from './model.js';

/** Knobs of {@link FakeDevices}. */
export interface FakeDeviceKnobs {
  /** The kernel makes 802.1Q VLANs (default true; false = these test machines). */
  vlans?: boolean;
  /** The host has IPv6 (default true). */
  ipv6?: boolean;
  /** Every call fails as if the tools could not be run. */
  down?: boolean;
  /** Changes to this device are refused (REFUSED). */
  refuseDevice?: string;
  /** The next N changes of this kind are refused (REFUSED), then they work. */
  failKind?: { kind: DeviceAction['kind']; times: number };
}

type Link = { -readonly [K in keyof ObservedLink]: ObservedLink[K] };

export class FakeDevices implements ClientDevicePort {
  readonly links = new Map<string, Link>();
  readonly flood = new Map<string, string[]>();
  readonly ipv6 = new Map<string, Ipv6Settings>();
  /** Every change applied, in order. */
  readonly applied: DeviceAction[] = [];
  knobs: FakeDeviceKnobs = {};
  private nextIndex = 1;

  /** Adds a link netd did not make (a physical device, a bridge of the admin's). */
  addLink(name: string, o: Partial<Omit<Link, 'name' | 'index'>> = {}): void {
    this.links.set(name, { mtu: 1500, up: true, ...o, name, index: this.nextIndex++ });
    if (o.kind === 'bridge') this.ipv6.set(name, { accept_dad: '1', disable_ipv6: '0' });
  }

  observe(): Promise<ObservedDevices> {
    return Promise.resolve().then(() => {
      this.check();
      const ipv6 = this.knobs.ipv6 === false ? undefined : new Map([...this.ipv6].map(([k, v]) => [k, { ...v }]));
      return { links: [...this.links.values()].map((l) => ({ ...l })), flood: new Map([...this.flood].map(([k, v]) => [k, [...v]])), ipv6 };
    });
  }

  apply(a: DeviceAction): Promise<void> {
    return Promise.resolve().then(() => {
      this.check();
      const fk = this.knobs.failKind;
      if (this.knobs.refuseDevice === a.device || (fk && fk.kind === a.kind && fk.times > 0)) {
        if (fk && fk.kind === a.kind) fk.times--;
        throw this.err('REFUSED', a, 'RTNETLINK answers: Operation not permitted (fake)');
      }
      this.change(a);
      this.applied.push(a);
    });
  }

  private check(): void {
    if (this.knobs.down) throw new ClientNetError('UNAVAILABLE', 'ip: not available (fake down)');
  }

  private err(reason: ClientNetError['reason'], a: DeviceAction, detail: string): ClientNetError {
    return new ClientNetError(reason, `client network ${a.vni}: ${a.kind} ${a.device}: ${detail}`, { vni: a.vni, device: a.device });
  }

  private need(a: DeviceAction, name: string): Link {
    const l = this.links.get(name);
    if (!l) throw this.err('NO_DEVICE', a, `Cannot find device "${name}"`);
    return l;
  }

  private create(a: DeviceAction, link: Omit<Link, 'index' | 'up' | 'alias' | 'name'>): void {
    if (this.links.has(a.device)) throw this.err('EXISTS', a, 'RTNETLINK answers: File exists');
    this.links.set(a.device, { ...link, name: a.device, index: this.nextIndex++, up: false, alias: OWNER_ALIAS });
    if (link.kind === 'bridge') this.ipv6.set(a.device, { accept_dad: '1', disable_ipv6: '0' });
  }

  private change(a: DeviceAction): void {
    switch (a.kind) {
      case 'create-vxlan':
        this.checkMtu(a, 'vxlan', this.need(a, a.lower), a.mtu);
        return this.create(a, { kind: 'vxlan', mtu: a.mtu, id: a.vni, dstport: VXLAN_PORT, lower: a.lower });
      case 'create-vlan':
        if (this.knobs.vlans === false) {
          const why = `cannot create ${a.device} (802.1Q VLAN ${a.vni} on ${a.lower}): this kernel has no support for that device type (ip: Error: Unknown device type.)`;
          throw new ClientNetError('UNSUPPORTED', `client network ${a.vni}: ${why}`, { vni: a.vni, device: a.device });
        }
        this.checkMtu(a, 'vlan', this.need(a, a.lower), a.mtu);
        return this.create(a, { kind: 'vlan', mtu: a.mtu, id: a.vni, lower: a.lower });
      case 'create-bridge':
        return this.create(a, { kind: 'bridge', mtu: a.mtu });
      case 'set-mtu': {
        const l = this.need(a, a.device);
        if (l.kind === 'vxlan' || l.kind === 'vlan') this.checkMtu(a, l.kind, this.need(a, l.lower ?? ''), a.mtu);
        l.mtu = a.mtu;
        return;
      }
      case 'set-master': {
        const l = this.need(a, a.device);
        if (this.need(a, a.bridge).kind !== 'bridge') throw this.err('REFUSED', a, `${a.bridge} is not a bridge`);
        l.master = a.bridge;
        return;
      }
      case 'set-up':
        this.need(a, a.device).up = true;
        return;
      case 'set-ipv6': {
        const s = this.ipv6.get(a.device);
        if (!s || this.knobs.ipv6 === false) throw this.err('REFUSED', a, `sysctl: cannot stat /proc/sys/net/ipv6/conf/${a.device}/${a.key}: No such file or directory`);
        this.ipv6.set(a.device, { ...s, [a.key]: a.value });
        return;
      }
      case 'flood-add': {
        if (this.need(a, a.device).kind !== 'vxlan') throw this.err('REFUSED', a, 'Operation not supported');
        const have = this.flood.get(a.device) ?? [];
        if (!have.includes(a.dst)) this.flood.set(a.device, [...have, a.dst]);
        return;
      }
      case 'flood-del':
        this.flood.set(a.device, (this.flood.get(a.device) ?? []).filter((d) => d !== a.dst));
        return;
      case 'delete':
        this.remove(a.device);
    }
  }

  private checkMtu(a: DeviceAction, kind: 'vxlan' | 'vlan', lower: Link, mtu: number): void {
    const max = kind === 'vxlan' ? lower.mtu - VXLAN_OVERHEAD : lower.mtu;
    if (mtu > max) throw this.err(a.kind === 'set-mtu' ? 'MTU_REFUSED' : 'REFUSED', a, 'RTNETLINK answers: Invalid argument');
  }

  private remove(name: string): void {
    if (!this.links.delete(name)) return;
    this.flood.delete(name);
    this.ipv6.delete(name);
    for (const l of this.links.values()) if (l.master === name) l.master = undefined;
  }
}
