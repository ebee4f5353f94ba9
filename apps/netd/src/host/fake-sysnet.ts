import { SysNetError, type DeviceCounters, type NetDevice, type SysNet } from './sysnet.js';

interface FakeDevice {
  physical: boolean;
  counters: DeviceCounters;
}

/**
 * In-memory {@link SysNet} for unit tests: add devices, move their counters forward, remove them;
 * `failReads` makes the next N counter reads of a device fail as a vanished device would.
 */
export class FakeSysNet implements SysNet {
  private readonly devices = new Map<string, FakeDevice>();
  private readonly failing = new Map<string, number>();

  /** Adds (or replaces) a device with zeroed counters unless given. */
  add(name: string, physical: boolean, counters: Partial<DeviceCounters> = {}): this {
    const zero: DeviceCounters = { rxBytes: 0, txBytes: 0, rxPackets: 0, txPackets: 0, speedMbps: null, operstate: 'up' };
    this.devices.set(name, { physical, counters: { ...zero, ...counters } });
    return this;
  }

  /** Adds to a device's counters (traffic), or sets link facts. */
  traffic(name: string, delta: Partial<Record<'rxBytes' | 'txBytes' | 'rxPackets' | 'txPackets', number>>): void {
    const d = this.mustGet(name);
    const c = d.counters;
    d.counters = {
      ...c,
      rxBytes: c.rxBytes + (delta.rxBytes ?? 0),
      txBytes: c.txBytes + (delta.txBytes ?? 0),
      rxPackets: c.rxPackets + (delta.rxPackets ?? 0),
      txPackets: c.txPackets + (delta.txPackets ?? 0),
    };
  }

  remove(name: string): void {
    this.devices.delete(name);
  }

  /** The next `times` reads of `name` throw {@link SysNetError}. */
  failReads(name: string, times: number): void {
    this.failing.set(name, times);
  }

  async listDevices(): Promise<NetDevice[]> {
    return [...this.devices.entries()].map(([name, d]) => ({ name, physical: d.physical })).sort((a, b) => a.name.localeCompare(b.name));
  }

  async readCounters(device: string): Promise<DeviceCounters> {
    const left = this.failing.get(device) ?? 0;
    if (left > 0) {
      this.failing.set(device, left - 1);
      throw new SysNetError(`${device}: cannot read statistics (fake failure)`);
    }
    return { ...this.mustGet(device).counters };
  }

  private mustGet(name: string): FakeDevice {
    const d = this.devices.get(name);
    if (!d) throw new SysNetError(`${name}: no such device`);
    return d;
  }
}
