/**
 * Port to the kernel's network device statistics (`/sys/class/net`), with the real adapter.
 * The fake is {@link FakeSysNet} in `./fake-sysnet.ts`.
 */
import { access, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PvcError } from '@pvc/runtime';

/** A network device as listed by the kernel. */
export interface NetDevice {
  readonly name: string;
  /** Backed by hardware: `/sys/class/net/<dev>/device` exists (the original's "physical" rule). */
  readonly physical: boolean;
}

/** Cumulative counters and link facts of one device at one instant. */
export interface DeviceCounters {
  readonly rxBytes: number;
  readonly txBytes: number;
  readonly rxPackets: number;
  readonly txPackets: number;
  /** Link speed in Mbit/s; null when the kernel does not know it (virtual device, link down). */
  readonly speedMbps: number | null;
  /** `operstate`, e.g. `up`, `down`, `unknown`. */
  readonly operstate: string;
}

/** The port: list devices, read one device's counters. */
export interface SysNet {
  listDevices(): Promise<NetDevice[]>;
  /** Throws {@link SysNetError} when the device is gone or a counter is unreadable. */
  readCounters(device: string): Promise<DeviceCounters>;
}

/** A device's statistics could not be read or made no sense. */
export class SysNetError extends PvcError {
  constructor(message: string, cause?: unknown) {
    super('SYSNET_READ_FAILED', message, { cause, retryable: true });
  }
}

/** Device names the kernel would accept; anything else is never joined into a path. */
const DEVICE_NAME = /^[A-Za-z0-9_.:@-]{1,15}$/;

async function readText(path: string): Promise<string> {
  return (await readFile(path, 'utf8')).trim();
}

async function readCounter(root: string, device: string, name: string): Promise<number> {
  const path = join(root, device, 'statistics', name);
  let text: string;
  try {
    text = await readText(path);
  } catch (err) {
    throw new SysNetError(`${device}: cannot read ${path}`, err);
  }
  if (!/^\d+$/.test(text)) throw new SysNetError(`${device}: ${path} is not a counter: "${text.slice(0, 40)}"`);
  return Number(text);
}

async function readSpeed(root: string, device: string): Promise<number | null> {
  try {
    const text = await readText(join(root, device, 'speed'));
    const n = Number(text);
    return /^-?\d+$/.test(text) && n >= 0 ? n : null;
  } catch {
    return null; // EINVAL for virtual devices and links that are down
  }
}

/**
 * The real adapter over sysfs. `root` is `/sys/class/net` except in tests of the adapter itself.
 */
export function createSysfsNet(root = '/sys/class/net'): SysNet {
  return {
    async listDevices() {
      const names = (await readdir(root)).filter((n) => DEVICE_NAME.test(n)).sort();
      return Promise.all(
        names.map(async (name) => ({
          name,
          physical: await access(join(root, name, 'device')).then(
            () => true,
            () => false,
          ),
        })),
      );
    },
    async readCounters(device) {
      if (!DEVICE_NAME.test(device)) throw new SysNetError(`not a network device name: "${device}"`);
      const counter = (name: string): Promise<number> => readCounter(root, device, name);
      const [rxBytes, txBytes, rxPackets, txPackets] = await Promise.all([
        counter('rx_bytes'),
        counter('tx_bytes'),
        counter('rx_packets'),
        counter('tx_packets'),
      ]);
      const operstate = await readText(join(root, device, 'operstate')).catch(() => 'unknown');
      return { rxBytes, txBytes, rxPackets, txPackets, speedMbps: await readSpeed(root, device), operstate };
    },
  };
}
