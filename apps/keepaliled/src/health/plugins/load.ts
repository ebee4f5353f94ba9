/**
 * Built-in health plugin `load`: 50 when the 1-minute load average exceeds the number of online
 * CPUs (the original's `load` plugin).
 *
 * Self-contained: imports types only, so the built `.js` can be copied into any plugin directory.
 */
import type { HealthPlugin, PluginResult } from '../types.js';

/** Delta when the node is overloaded. */
export const OVERLOAD_DELTA = 50;

/** The three load averages of `/proc/loadavg`. */
export function parseLoadavg(text: string): [number, number, number] {
  const parts = text.trim().split(/\s+/).slice(0, 3).map(Number);
  if (parts.length !== 3 || parts.some((n) => !Number.isFinite(n) || n < 0)) {
    throw new Error(`unreadable /proc/loadavg: ${JSON.stringify(text.slice(0, 60))}`);
  }
  return parts as [number, number, number];
}

/** Counts the CPUs of a kernel CPU list such as `0-3,6,8-9` (`/sys/devices/system/cpu/online`). */
export function countCpuList(text: string): number {
  let n = 0;
  for (const part of text.trim().split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!m) throw new Error(`unreadable CPU list: ${JSON.stringify(text.slice(0, 60))}`);
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    if (hi < lo) throw new Error(`unreadable CPU list: ${JSON.stringify(text.slice(0, 60))}`);
    n += hi - lo + 1;
  }
  return n;
}

const plugin: HealthPlugin = {
  name: 'load',
  async run(ctx): Promise<PluginResult> {
    const [load1, load5, load15] = parseLoadavg(await ctx.readFile('/proc/loadavg'));
    const cpus = countCpuList(await ctx.readFile('/sys/devices/system/cpu/online'));
    const over = load1 > cpus;
    return {
      delta: over ? OVERLOAD_DELTA : 0,
      message: `1-minute load ${load1.toFixed(2)} ${over ? 'exceeds' : 'within'} ${cpus} CPU${cpus === 1 ? '' : 's'}`,
      data: { load1, load5, load15, cpus },
    };
  },
};

export default plugin;
