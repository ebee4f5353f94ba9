import { readFile } from 'node:fs/promises';
import type { HostStats, MemoryFigures } from '../ports.js';

/** Parses /proc/meminfo into psutil's total / used / available, MiB. */
export function parseMeminfo(text: string): MemoryFigures {
  const kib = (key: string): number => {
    const m = new RegExp(`^${key}:\\s+(\\d+)\\s*kB`, 'm').exec(text);
    if (!m?.[1]) throw new Error(`/proc/meminfo has no ${key}`);
    return Number(m[1]);
  };
  const total = kib('MemTotal');
  const free = kib('MemFree');
  const available = /^MemAvailable:/m.test(text) ? kib('MemAvailable') : free;
  // psutil: used = total - free - buffers - cached (cached incl. SReclaimable).
  const opt = (key: string): number => (new RegExp(`^${key}:`, 'm').test(text) ? kib(key) : 0);
  let used = total - free - opt('Buffers') - opt('Cached') - opt('SReclaimable');
  if (used < 0) used = total - free;
  return { totalMiB: Math.round(total / 1024), usedMiB: Math.round(used / 1024), freeMiB: Math.round(available / 1024) };
}

/** Parses the 1-minute figure of /proc/loadavg. */
export function parseLoadavg(text: string): number {
  const first = text.trim().split(/\s+/)[0] ?? '';
  const v = first === '' ? NaN : Number(first);
  if (!Number.isFinite(v)) throw new Error(`unexpected /proc/loadavg: ${text.slice(0, 40)}`);
  return v;
}

/** The real {@link HostStats}, from /proc. */
export const procHostStats: HostStats = {
  memory: async () => parseMeminfo(await readFile('/proc/meminfo', 'utf8')),
  load1: async () => parseLoadavg(await readFile('/proc/loadavg', 'utf8')),
};
