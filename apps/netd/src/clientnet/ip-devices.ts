/**
 * The real {@link ClientDevicePort}: `ip -json -d link show`, `bridge -json fdb show` and
 * `sysctl -r` to observe; `ip link add|set|del`, `bridge fdb append|del` and `sysctl -w` to change
 * (iproute2, procps), through the Exec port, each with a deadline.
 *
 * @module
 */
import { describeError, type Exec, type ExecResult } from '@pvc/runtime';
import { ClientNetError, commandsOf, type ClientDevicePort, type ClientNetErrorCode, type Command } from './device-port.js';
import type { DeviceAction, Ipv6Settings, ObservedDevices, ObservedLink } from './model.js';

/** Options of {@link createIpDevices}. */
export interface IpDevicesOptions {
  exec: Exec;
  /**
   * The command line before `ip`/`bridge`/`sysctl` (default none): tests run them in a network
   * namespace with `['ip', 'netns', 'exec', '<ns>']`.
   */
  prefix?: readonly string[];
  /** Deadline of one call, ms (default 5000). */
  timeoutMs?: number;
}

interface LinkJson {
  ifindex?: number;
  ifname?: string;
  mtu?: number;
  flags?: string[];
  master?: string;
  ifalias?: string;
  link?: string;
  linkinfo?: { info_kind?: string; info_data?: { id?: number; port?: number; link?: string } };
}
interface FdbJson { mac?: string; ifname?: string; dst?: string }

const ZERO_MAC = '00:00:00:00:00:00';
const IPV6_KEYS = /^net\.ipv6\.conf\.(vmbr[0-9]+)\.(accept_dad|disable_ipv6) = (.*)$/;
const NO_DEVICE = /Cannot find device|No such device|does not exist/i;
const UNSUPPORTED = /Unknown device type|Operation not supported/i;

function toLink(l: LinkJson): ObservedLink {
  const kind = l.linkinfo?.info_kind;
  const data = l.linkinfo?.info_data;
  return {
    name: l.ifname ?? '',
    index: l.ifindex ?? 0,
    kind,
    mtu: l.mtu ?? 0,
    up: (l.flags ?? []).includes('UP'),
    master: l.master,
    alias: l.ifalias,
    id: kind === 'vxlan' || kind === 'vlan' ? data?.id : undefined,
    dstport: kind === 'vxlan' ? data?.port : undefined,
    // A VXLAN names its device in info_data; a VLAN's is the link's `link`.
    lower: kind === 'vxlan' ? data?.link : kind === 'vlan' ? l.link : undefined,
  };
}

function parseJson<T>(r: ExecResult, what: string): T[] {
  try {
    const parsed: unknown = JSON.parse(r.stdout.trim() === '' ? '[]' : r.stdout);
    return Array.isArray(parsed) ? (parsed as T[]) : [];
  } catch (err) {
    throw new ClientNetError('UNAVAILABLE', `${what}: output is not JSON (${describeError(err)})`, { cause: err });
  }
}

/** What failed creating a device, in words (for the UNSUPPORTED message). */
function creating(a: DeviceAction): string {
  if (a.kind === 'create-vlan') return `802.1Q VLAN ${a.vni} on ${a.lower}`;
  if (a.kind === 'create-vxlan') return `VXLAN ${a.vni} over ${a.lower}`;
  return 'a bridge';
}

function classify(a: DeviceAction, detail: string): ClientNetErrorCode {
  if (a.kind.startsWith('create-') && UNSUPPORTED.test(detail)) return 'UNSUPPORTED';
  if (NO_DEVICE.test(detail)) return 'NO_DEVICE';
  if (a.kind === 'set-mtu') return 'MTU_REFUSED';
  if (/File exists/i.test(detail)) return 'EXISTS';
  return 'REFUSED';
}

function failure(a: DeviceAction, cmd: Command, detail: string): ClientNetError {
  const reason = classify(a, detail);
  const message = reason === 'UNSUPPORTED'
    ? `client network ${a.vni}: cannot create ${a.device} (${creating(a)}): this kernel has no support for that device type (${cmd[0]}: ${detail})`
    : `client network ${a.vni}: ${cmd.join(' ')}: ${detail}`;
  return new ClientNetError(reason, message, { vni: a.vni, device: a.device });
}

/** Nothing to do: the device (or its entry) is already gone. */
const alreadyDone = (a: DeviceAction, detail: string): boolean => (a.kind === 'delete' || a.kind === 'flood-del') && NO_DEVICE.test(detail);

/** Runs one command (prefixed); rejects with UNAVAILABLE only when it could not be run at all. */
type Run = (cmd: Command, vni?: number, device?: string) => Promise<ExecResult>;

async function readJson<T>(run: Run, cmd: Command): Promise<T[]> {
  const r = await run(cmd);
  if (r.exitCode !== 0) throw new ClientNetError('UNAVAILABLE', `${cmd.join(' ')}: ${r.stderr.trim() || `exit status ${r.exitCode}`}`);
  return parseJson<T>(r, cmd.join(' '));
}

/** The all-zeros entries of the `vxlan<n>` links (one `bridge -json fdb show` for all). */
async function readFlood(run: Run, links: readonly ObservedLink[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (!links.some((l) => /^vxlan[0-9]+$/.test(l.name))) return out;
  for (const e of await readJson<FdbJson>(run, ['bridge', '-json', 'fdb', 'show'])) {
    if (e.mac !== ZERO_MAC || e.dst === undefined || e.ifname === undefined || !/^vxlan[0-9]+$/.test(e.ifname)) continue;
    out.set(e.ifname, [...(out.get(e.ifname) ?? []), e.dst]);
  }
  return out;
}

/** `accept_dad` and `disable_ipv6` of every `vmbr<n>`; undefined when the host has no IPv6. */
async function readIpv6(run: Run): Promise<Map<string, Ipv6Settings> | undefined> {
  const cmd: Command = ['sysctl', '-r', '^net\\.ipv6\\.conf\\.vmbr[0-9]+\\.(accept_dad|disable_ipv6)$', 'net.ipv6.conf'];
  const r = await run(cmd);
  // No net.ipv6 at all (IPv6 disabled on the kernel command line): nothing to set.
  if (r.exitCode !== 0 && /cannot stat|No such file/i.test(r.stderr)) return undefined;
  if (r.exitCode !== 0) throw new ClientNetError('UNAVAILABLE', `${cmd.join(' ')}: ${r.stderr.trim() || `exit status ${r.exitCode}`}`);
  const out = new Map<string, Ipv6Settings>();
  for (const line of r.stdout.split('\n')) {
    const m = IPV6_KEYS.exec(line.trim());
    if (m) out.set(m[1]!, { ...out.get(m[1]!), [m[2]!]: m[3] });
  }
  return out;
}

async function applyAction(run: Run, a: DeviceAction): Promise<void> {
  const [first, ...rest] = commandsOf(a);
  const r = await run(first, a.vni, a.device);
  const detail = r.stderr.trim() || r.stdout.trim() || `exit status ${r.exitCode}`;
  if (r.exitCode !== 0 && alreadyDone(a, detail)) return;
  if (r.exitCode !== 0) throw failure(a, first, detail);
  for (const cmd of rest) {
    const m = await run(cmd, a.vni, a.device);
    if (m.exitCode === 0) continue;
    // A created device that cannot be marked is removed: netd deletes only what it marked.
    await run(['ip', 'link', 'del', 'dev', a.device], a.vni, a.device).catch(() => undefined);
    throw failure(a, cmd, m.stderr.trim() || `exit status ${m.exitCode}`);
  }
}

export function createIpDevices(o: IpDevicesOptions): ClientDevicePort {
  const timeoutMs = o.timeoutMs ?? 5_000;
  const run: Run = async (cmd, vni, device) => {
    const [command, ...pre] = [...(o.prefix ?? []), cmd[0]];
    try {
      return await o.exec.run(command!, [...pre, ...cmd.slice(1)], { timeoutMs });
    } catch (err) {
      const who = vni === undefined ? '' : `client network ${vni}: `;
      throw new ClientNetError('UNAVAILABLE', `${who}${cmd.join(' ')}: ${describeError(err)}`, { vni, device, cause: err });
    }
  };
  return {
    async observe() {
      const links = (await readJson<LinkJson>(run, ['ip', '-json', '-d', 'link', 'show'])).filter((l) => typeof l.ifname === 'string').map(toLink);
      return { links, flood: await readFlood(run, links), ipv6: await readIpv6(run) } satisfies ObservedDevices;
    },
    apply: (a) => applyAction(run, a),
  };
}
