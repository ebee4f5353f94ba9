import { describeLinkOp, LinkError, type AddressProbe, type AddressState, type LinkErrorCode, type LinkOp, type LinkPort, type LinkState, type RouteState } from './link-port.js';
import { inSubnet } from './ipv4.js';

interface FakeLink {
  name: string;
  mtu: number;
  up: boolean;
  master?: string | undefined;
  kind?: string | undefined;
  maxMtu: number;
  /** Addresses other hosts on this link's segment answer ARP for, with their MAC. */
  peers: Map<string, string>;
}

/** Options of {@link FakeLinks.addDevice}. */
export interface FakeDeviceOptions {
  mtu?: number;
  up?: boolean;
  /** Largest MTU the device takes (default 65535, as veth and bridges). */
  maxMtu?: number;
  kind?: string;
}

type FailKnob = LinkOp['kind'] | 'read' | 'probe';

/**
 * In-memory kernel links for unit tests, refusing what the kernel refuses: ops on a missing link
 * (`NO_DEVICE`), an MTU above the device's `maxMtu` (`MTU_REFUSED`), a second bridge or address of
 * one name (`EXISTS`), a port into something that is not a bridge, a default route whose gateway
 * is not inside an address of its (up) device, a probe from a down link (`REFUSED`/`PROBE_FAILED`).
 * Failure knobs: `fail.<op kind | read | probe> = N` makes the next N such calls fail with
 * `failMessage`. Records every applied op in `ops` and every probe in `probes`. Another host on a
 * device's segment: {@link addPeer}; a probe from a bridge sees the peers of its ports with
 * carrier. Carrier: an up device has it unless in `unplugged`; an up bridge when it has no ports
 * or a port with carrier (at once: the kernel's second of delay is not modelled).
 */
export class FakeLinks implements LinkPort {
  readonly fail: Partial<Record<FailKnob, number>> = {};
  failMessage = 'RTNETLINK answers: Input/output error';
  readonly ops: LinkOp[] = [];
  readonly probes: { device: string; ip: string }[] = [];
  /** Devices whose cable is out: up, but no carrier. */
  readonly unplugged = new Set<string>();
  private readonly byName = new Map<string, FakeLink>();
  private readonly addrs: AddressState[] = [];
  private routes: RouteState[] = [];

  /** Puts a device in place (a NIC, or one end of a veth pair). */
  addDevice(name: string, o: FakeDeviceOptions = {}): this {
    this.byName.set(name, { name, mtu: o.mtu ?? 1500, up: o.up ?? false, kind: o.kind, maxMtu: o.maxMtu ?? 65535, peers: new Map() });
    return this;
  }

  /** Another host on the segment of `device` holds `ip` (it answers duplicate address probes). */
  addPeer(device: string, ip: string, mac = '02:00:00:00:00:01'): this {
    this.must(device, 'peer').peers.set(ip, mac);
    return this;
  }

  /** An address put in place by someone else (a floating address, the administrator). */
  addExistingAddress(device: string, ip: string, prefix: number): this {
    this.addrs.push({ device, ip, prefix });
    return this;
  }

  /** A default route put in place by someone else. */
  addExistingRoute(route: RouteState): this {
    this.routes.push(route);
    return this;
  }

  private knob(k: FailKnob, what: string, code: LinkErrorCode = 'REFUSED'): void {
    const n = this.fail[k] ?? 0;
    if (n <= 0) return;
    this.fail[k] = n - 1;
    throw new LinkError(code, what, this.failMessage);
  }

  private must(name: string, what: string): FakeLink {
    const l = this.byName.get(name);
    if (!l) throw new LinkError('NO_DEVICE', what, `Cannot find device "${name}"`);
    return l;
  }

  links(): Promise<LinkState[]> {
    return this.read(() => [...this.byName.values()].map(({ name, mtu, up, master, kind }) => ({ name, mtu, up, carrier: this.carrier(name), master, kind })));
  }

  private carrier(name: string): boolean {
    const l = this.byName.get(name);
    if (!l?.up) return false;
    if (l.kind !== 'bridge') return !this.unplugged.has(name);
    const ports = [...this.byName.values()].filter((p) => p.master === name);
    return ports.length === 0 || ports.some((p) => this.carrier(p.name));
  }

  addresses(): Promise<AddressState[]> {
    return this.read(() => this.addrs.map((a) => ({ ...a })));
  }

  defaultRoutes(): Promise<RouteState[]> {
    return this.read(() => this.routes.map((r) => ({ ...r })));
  }

  private read<T>(fn: () => T): Promise<T> {
    try {
      this.knob('read', 'ip -json show');
      return Promise.resolve(fn());
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  apply(op: LinkOp): Promise<void> {
    try {
      this.knob(op.kind, describeLinkOp(op), op.kind === 'set-mtu' ? 'MTU_REFUSED' : 'REFUSED');
      this.applyOp(op, describeLinkOp(op));
      this.ops.push(op);
      return Promise.resolve();
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  private applyOp(op: LinkOp, what: string): void {
    switch (op.kind) {
      case 'add-bridge':
        if (this.byName.has(op.bridge)) throw new LinkError('EXISTS', what, 'RTNETLINK answers: File exists');
        this.byName.set(op.bridge, { name: op.bridge, mtu: 1500, up: false, kind: 'bridge', maxMtu: 65535, peers: new Map() });
        return;
      case 'set-master': {
        const dev = this.must(op.device, what);
        const br = this.byName.get(op.bridge);
        if (!br) throw new LinkError('NO_DEVICE', what, `Error: argument "${op.bridge}" is wrong: Device does not exist`);
        if (br.kind !== 'bridge') throw new LinkError('REFUSED', what, 'RTNETLINK answers: Operation not supported');
        dev.master = op.bridge;
        return;
      }
      case 'set-mtu': {
        const dev = this.must(op.device, what);
        if (op.mtu > dev.maxMtu) throw new LinkError('MTU_REFUSED', what, 'Error: mtu greater than device maximum.');
        if (op.mtu < 68) throw new LinkError('MTU_REFUSED', what, 'Error: mtu less than device minimum.');
        dev.mtu = op.mtu;
        return;
      }
      case 'set-up':
        this.must(op.device, what).up = true;
        return;
      case 'add-address': {
        this.must(op.device, what);
        const [ip = '', bits = '32'] = op.cidr.split('/');
        const prefix = Number(bits);
        if (this.addrs.some((a) => a.device === op.device && a.ip === ip && a.prefix === prefix)) throw new LinkError('EXISTS', what, 'Error: ipv4: Address already assigned.');
        this.addrs.push({ device: op.device, ip, prefix });
        return;
      }
      case 'replace-default-route': {
        const dev = this.must(op.device, what);
        const connected = this.addrs.some((a) => a.device === op.device && inSubnet(op.gateway, a.ip, a.prefix));
        if (!dev.up || !connected) throw new LinkError('REFUSED', what, 'Error: Nexthop has invalid gateway.');
        this.routes = [...this.routes.filter((r) => r.metric !== undefined), { gateway: op.gateway, device: op.device }];
        return;
      }
    }
  }

  probeAddress(device: string, ip: string): Promise<AddressProbe> {
    try {
      this.probes.push({ device, ip });
      const what = `duplicate address probe for ${ip} on ${device} (arping -D)`;
      this.knob('probe', what, 'PROBE_FAILED');
      const link = this.byName.get(device);
      if (!link) throw new LinkError('PROBE_FAILED', what, `arping: Device ${device} not available.`);
      if (!link.up) throw new LinkError('PROBE_FAILED', what, `Interface "${device}" is down`);
      const segment = [link, ...[...this.byName.values()].filter((l) => l.master === device)].filter((l) => this.carrier(l.name));
      const mac = segment.map((l) => l.peers.get(ip)).find((m) => m !== undefined);
      return Promise.resolve(mac === undefined ? { inUse: false } : { inUse: true, by: mac });
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }
}
