/**
 * Network statistics for keepalives: every second, the cumulative counters of the selected devices
 * are sampled; a device's figures are its rates averaged over the last `windowSamples` seconds
 * (the keepalive interval), in the original's `network_stats` format.
 */
import type { NodeNetworking } from '@pvc/config';
import { AbortedError, describeError, type Clock, type Logger } from '@pvc/runtime';
import type { DeviceCounters, NetDevice, SysNet } from './host/sysnet.js';

/** One device's entry of `/nodes/<n>/network_stats` (the original's keys, in its order). */
export interface IfaceStats {
  /** Bits per second received / sent, averaged over the window. */
  rx_bps: number;
  /** Packets per second received (NOT multiplied by 8 as the original does; see docs). */
  rx_pps: number;
  tx_bps: number;
  tx_pps: number;
  total_bps: number;
  total_pps: number;
  /** Link speed in bit/s; 0 when unknown. */
  link_speed: number;
  /** The kernel's operstate (`up`, `down`, `unknown`, …). */
  state: string;
}

/** The whole `network_stats` object: device name → figures. */
export type NetworkStats = Record<string, IfaceStats>;

/** Sampling period, as in the original. */
export const SAMPLE_INTERVAL_MS = 1000;

/** Device names mentioned in `system.configuration.networking` (cluster networks, bridge, SR-IOV PFs). */
export function configuredDevices(networking: NodeNetworking | undefined): Set<string> {
  if (!networking) return new Set();
  const names = [networking.upstream.device, networking.cluster.device, networking.storage.device];
  if (networking.bridge_device) names.push(networking.bridge_device);
  for (const pf of networking.sriov_device) names.push(pf.phy);
  return new Set(names);
}

/**
 * Which devices are sampled: every physical NIC (the original's rule) plus every device named in
 * the networking config that exists (bonds, VLANs and bridges carrying cluster traffic are not
 * "physical" in sysfs). `lo` never.
 */
export function selectDevices(devices: readonly NetDevice[], configured: ReadonlySet<string>): string[] {
  return devices.filter((d) => d.name !== 'lo' && (d.physical || configured.has(d.name))).map((d) => d.name);
}

interface Sample {
  at: number;
  c: DeviceCounters;
}

function counterWentBack(a: DeviceCounters, b: DeviceCounters): boolean {
  return b.rxBytes < a.rxBytes || b.txBytes < a.txBytes || b.rxPackets < a.rxPackets || b.txPackets < a.txPackets;
}

/** Averages over a full window (oldest to newest sample); pure. */
export function windowRates(first: Sample, last: Sample): IfaceStats {
  const seconds = Math.max((last.at - first.at) / 1000, 0.001);
  const rate = (a: number, b: number, scale: number): number => Math.max(0, Math.trunc(((b - a) * scale) / seconds));
  const rx_bps = rate(first.c.rxBytes, last.c.rxBytes, 8);
  const tx_bps = rate(first.c.txBytes, last.c.txBytes, 8);
  const rx_pps = rate(first.c.rxPackets, last.c.rxPackets, 1);
  const tx_pps = rate(first.c.txPackets, last.c.txPackets, 1);
  const speed = last.c.speedMbps;
  return {
    rx_bps,
    rx_pps,
    tx_bps,
    tx_pps,
    total_bps: rx_bps + tx_bps,
    total_pps: rx_pps + tx_pps,
    link_speed: speed === null ? 0 : speed * 1_000_000,
    state: last.c.operstate,
  };
}

/** Dependencies of {@link NetStatsSampler}. */
export interface NetStatsDeps {
  sysnet: SysNet;
  clock: Clock;
  logger: Logger;
  /** Seconds averaged over: the keepalive interval (≥ 1). */
  windowSamples: number;
  /** See {@link configuredDevices}. */
  configured: ReadonlySet<string>;
}

/**
 * The 1-second sampler. A device appears in {@link snapshot} once it has `windowSamples + 1`
 * samples (so `{}` for the first keepalive interval after start, as in the original). Devices are
 * re-listed on every sample: new ones start a fresh window, vanished ones are dropped; a counter
 * that goes backwards (device re-created) restarts that device's window.
 */
export class NetStatsSampler {
  private readonly windows = new Map<string, Sample[]>();
  private lastProblem = '';

  constructor(private readonly deps: NetStatsDeps) {}

  /** Takes one sample of every selected device. Never throws: problems are logged once each. */
  async sampleOnce(): Promise<void> {
    let devices: string[];
    try {
      devices = selectDevices(await this.deps.sysnet.listDevices(), this.deps.configured);
    } catch (err) {
      this.problem(`cannot list network devices: ${describeError(err)}`);
      return;
    }
    for (const name of [...this.windows.keys()]) if (!devices.includes(name)) this.windows.delete(name);
    const at = this.deps.clock.now();
    const failures: string[] = [];
    await Promise.all(
      devices.map(async (name) => {
        try {
          this.push(name, { at, c: await this.deps.sysnet.readCounters(name) });
        } catch (err) {
          this.windows.delete(name);
          failures.push(describeError(err));
        }
      }),
    );
    this.problem(failures.sort().join('; '));
  }

  /** The current figures of every device with a full window, sorted by device name. */
  snapshot(): NetworkStats {
    const out: NetworkStats = {};
    for (const name of [...this.windows.keys()].sort()) {
      const w = this.windows.get(name) ?? [];
      const first = w[0];
      const last = w[w.length - 1];
      if (w.length > this.deps.windowSamples && first && last) out[name] = windowRates(first, last);
    }
    return out;
  }

  /** Samples every {@link SAMPLE_INTERVAL_MS} until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await this.sampleOnce();
      try {
        await this.deps.clock.sleep(SAMPLE_INTERVAL_MS, signal);
      } catch (err) {
        if (err instanceof AbortedError) return;
        throw err;
      }
    }
  }

  private push(name: string, sample: Sample): void {
    const w = this.windows.get(name) ?? [];
    const prev = w[w.length - 1];
    if (prev && counterWentBack(prev.c, sample.c)) w.length = 0;
    w.push(sample);
    while (w.length > this.deps.windowSamples + 1) w.shift();
    this.windows.set(name, w);
  }

  /** Logs a sampling problem when it first appears and when it clears (not every second). */
  private problem(text: string): void {
    if (text === this.lastProblem) return;
    if (text) this.deps.logger.warn({ problem: text }, 'network statistics sampling problem');
    else this.deps.logger.info('network statistics sampling recovered');
    this.lastProblem = text;
  }
}
