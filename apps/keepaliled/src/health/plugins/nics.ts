/**
 * Built-in health plugin `nics`: the upstream, cluster and storage devices and the bridge device of
 * `system.configuration.networking` (VLANs resolved to their parent) exist and are up, and every
 * bond among them has all its slaves up; +10 per problem (the original's `nics`, without its
 * link-speed check). Reads `ip -details -json link show` once per run.
 *
 * Self-contained: imports types only.
 */
import type { HealthPlugin, PluginContext, PluginResult } from '../types.js';

/** Delta per problem. */
export const NIC_PROBLEM_DELTA = 10;

/** The fields of one `ip -details -json link` entry we use. */
export interface IpLink {
  ifname: string;
  operstate?: string;
  flags?: string[];
  link?: string;
  master?: string;
  linkinfo?: { info_kind?: string; info_slave_kind?: string; info_slave_data?: { mii_status?: string } };
}

/** Parses `ip -json link` output; throws naming the problem when it is not a list of links. */
export function parseIpLinks(stdout: string): IpLink[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(stdout);
  } catch {
    throw new Error(`ip -json link: output is not JSON: ${JSON.stringify(stdout.slice(0, 60))}`);
  }
  if (!Array.isArray(parsed) || parsed.some((l) => typeof (l as IpLink | null)?.ifname !== 'string')) {
    throw new Error('ip -json link: output is not a list of links');
  }
  return parsed as IpLink[];
}

/** Up = operstate UP, or UNKNOWN with carrier (dummy and some virtual devices never say UP). */
export function isUp(l: IpLink): boolean {
  return l.operstate === 'UP' || (l.operstate === 'UNKNOWN' && (l.flags ?? []).includes('LOWER_UP'));
}

/** The devices to check, from the config, deduplicated, in a stable order. */
export function configuredDevices(ctx: PluginContext): string[] {
  const n = ctx.config.system.configuration.networking;
  if (n === undefined) return [];
  const all = [n.upstream.device, n.cluster.device, n.storage.device, n.bridge_device].filter((d): d is string => !!d);
  return [...new Set(all)];
}

/** Problems of one device (and its VLAN parent and bond slaves), and what was seen. */
export function checkDevice(name: string, links: readonly IpLink[], problems: string[], seen: Set<string>): void {
  if (seen.has(name)) return;
  seen.add(name);
  const l = links.find((x) => x.ifname === name);
  if (l === undefined) {
    problems.push(`${name} missing`);
    return;
  }
  if (!isUp(l)) problems.push(`${name} ${(l.operstate ?? 'unknown').toLowerCase()}`);
  const kind = l.linkinfo?.info_kind;
  if (kind === 'vlan' && l.link !== undefined) checkDevice(l.link, links, problems, seen);
  if (kind === 'bond') {
    const slaves = links.filter((x) => x.master === name);
    if (slaves.length === 0) problems.push(`bond ${name} has no slaves`);
    for (const s of slaves) {
      const mii = s.linkinfo?.info_slave_data?.mii_status;
      if (!isUp(s) || (mii !== undefined && mii !== 'UP')) problems.push(`bond ${name} slave ${s.ifname} down`);
    }
  }
}

async function run(ctx: PluginContext): Promise<PluginResult> {
  const r = await ctx.exec('ip', ['-details', '-json', 'link', 'show']);
  if (r.exitCode !== 0) throw new Error(`ip link show failed (exit ${r.exitCode}): ${r.stderr.trim()}`);
  const links = parseIpLinks(r.stdout);
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const d of configuredDevices(ctx)) checkDevice(d, links, problems, seen);
  const checked = [...seen];
  return {
    delta: problems.length * NIC_PROBLEM_DELTA,
    message: problems.length === 0 ? `${checked.length} devices up (${checked.join(', ')})` : problems.join('; '),
    data: { checked, problems },
  };
}

const plugin: HealthPlugin = {
  name: 'nics',
  setup: (ctx) => (configuredDevices(ctx).length === 0 ? 'no networking configured (system.configuration.networking)' : undefined),
  run,
};
export default plugin;
