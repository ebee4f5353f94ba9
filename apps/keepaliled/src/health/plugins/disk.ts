/**
 * Built-in health plugin `disk`: SMART health of the node's physical disks through `smartctl
 * --json` (smartmontools); +10 per finding or unreadable disk (the original's `disk`). Findings:
 * overall SMART status failed; NVMe critical warning, media errors, wear above 90 %; ATA attributes
 * that failed (`when_failed` set). Disks without SMART (virtual disks) are left out at setup; the
 * plugin does not load when smartctl is missing or no disk has SMART.
 *
 * Self-contained: imports types only.
 */
import type { HealthPlugin, PluginContext, PluginResult } from '../types.js';

/** Delta per finding. */
export const DISK_FINDING_DELTA = 10;
const SMART_TIMEOUT_MS = 10_000;

/** Whole disks from `lsblk --json -d -o NAME,TYPE` (no zram, loop, ram or optical devices). */
export function parseLsblkDisks(stdout: string): string[] {
  let parsed: { blockdevices?: { name?: unknown; type?: unknown }[] };
  try {
    parsed = JSON.parse(stdout) as typeof parsed;
  } catch {
    throw new Error(`lsblk: output is not JSON: ${JSON.stringify(stdout.slice(0, 60))}`);
  }
  if (!Array.isArray(parsed.blockdevices)) throw new Error('lsblk: no "blockdevices" list in its output');
  return parsed.blockdevices
    .filter((d) => d.type === 'disk' && typeof d.name === 'string' && !/^(zram|loop|ram)/.test(d.name))
    .map((d) => String(d.name));
}

interface SmartJson {
  smart_support?: { available?: boolean };
  smart_status?: { passed?: boolean };
  nvme_smart_health_information_log?: { critical_warning?: number; media_errors?: number; percentage_used?: number };
  ata_smart_attributes?: { table?: { name?: string; when_failed?: string }[] };
}

function parseSmart(stdout: string): SmartJson | undefined {
  try {
    const j = JSON.parse(stdout) as unknown;
    return j !== null && typeof j === 'object' ? (j as SmartJson) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Findings of one disk from `smartctl --all --json` (exit status bits 0–1 = the command or the
 * device open failed, so the answer is unusable).
 */
export function smartFindings(disk: string, exitCode: number, stdout: string): string[] {
  const j = parseSmart(stdout);
  if ((exitCode & 0b11) !== 0 || j === undefined) return [`${disk}: SMART data unreadable (smartctl exit ${exitCode})`];
  const out: string[] = [];
  if (j.smart_status?.passed === false) out.push(`${disk}: SMART overall health failed`);
  const nvme = j.nvme_smart_health_information_log;
  if (nvme !== undefined) {
    if ((nvme.critical_warning ?? 0) > 0) out.push(`${disk}: NVMe critical warning ${nvme.critical_warning}`);
    if ((nvme.media_errors ?? 0) > 0) out.push(`${disk}: ${nvme.media_errors} NVMe media errors`);
    if ((nvme.percentage_used ?? 0) > 90) out.push(`${disk}: ${nvme.percentage_used}% of rated wear used`);
  }
  for (const a of j.ata_smart_attributes?.table ?? []) {
    if (a.when_failed !== undefined && a.when_failed !== '') out.push(`${disk}: attribute ${a.name ?? '?'} failed (${a.when_failed})`);
  }
  return out;
}

/** Whether `smartctl --info --json` says the disk has SMART. */
export function hasSmart(exitCode: number, stdout: string): boolean {
  const j = parseSmart(stdout);
  return (exitCode & 0b11) === 0 && j?.smart_support?.available === true;
}

async function smartctl(ctx: PluginContext, args: string[]): Promise<{ exitCode: number; stdout: string }> {
  return ctx.exec('smartctl', args, { timeoutMs: SMART_TIMEOUT_MS });
}

/** Builds a fresh plugin (its own list of SMART-capable disks, found at setup). */
export function createDiskPlugin(): HealthPlugin {
  let disks: string[] = [];
  return {
    name: 'disk',
    async setup(ctx) {
      try {
        if ((await smartctl(ctx, ['--version'])).exitCode !== 0) return 'smartctl not installed (apt install smartmontools)';
      } catch {
        return 'smartctl not installed (apt install smartmontools)';
      }
      const ls = await ctx.exec('lsblk', ['--json', '-d', '-o', 'NAME,TYPE']);
      if (ls.exitCode !== 0) return `lsblk failed (exit ${ls.exitCode}): ${ls.stderr.trim()}`;
      const found = parseLsblkDisks(ls.stdout);
      disks = [];
      for (const d of found) {
        const r = await smartctl(ctx, ['--info', '--json', `/dev/${d}`]);
        if (hasSmart(r.exitCode, r.stdout)) disks.push(d);
      }
      if (disks.length === 0) return `no disk with SMART (${found.length === 0 ? 'no disks' : found.join(', ')})`;
      return undefined;
    },
    async run(ctx): Promise<PluginResult> {
      const findings: string[] = [];
      for (const d of disks) {
        const r = await smartctl(ctx, ['--all', '--json', `/dev/${d}`]);
        findings.push(...smartFindings(d, r.exitCode, r.stdout));
      }
      return {
        delta: findings.length * DISK_FINDING_DELTA,
        message: findings.length === 0 ? `${disks.length} disks healthy (${disks.join(', ')})` : findings.join('; '),
        data: { disks, findings },
      };
    },
  };
}

export default createDiskPlugin();
