import { AbortedError, describeError, type Exec } from '@pvc/runtime';
import { describeLinkOp, ipArgs, LinkError, type AddressProbe, type AddressState, type LinkErrorCode, type LinkOp, type LinkPort, type LinkState, type RouteState } from './link-port.js';

const TIMEOUT_MS = 5_000;

interface IpLinkJson { ifname?: string; mtu?: number; flags?: string[]; master?: string; linkinfo?: { info_kind?: string } }
interface IpAddrJson { ifname?: string; addr_info?: { family?: string; local?: string; prefixlen?: number }[] }
interface IpRouteJson { dst?: string; gateway?: string; dev?: string; metric?: number }

function classify(op: LinkOp, stderr: string): LinkErrorCode {
  if (/Cannot find device|No such device|does not exist/i.test(stderr)) return 'NO_DEVICE';
  if (op.kind === 'set-mtu') return 'MTU_REFUSED';
  if (/File exists|already assigned/i.test(stderr)) return 'EXISTS';
  return 'REFUSED';
}

async function readJson<T>(exec: Exec, args: string[]): Promise<T[]> {
  const what = `ip ${args.join(' ')}`;
  const r = await exec.run('ip', args, { timeoutMs: TIMEOUT_MS });
  if (r.exitCode !== 0) throw new LinkError('REFUSED', what, r.stderr.trim() || `exit ${r.exitCode}`);
  try {
    const parsed: unknown = JSON.parse(r.stdout.trim() === '' ? '[]' : r.stdout);
    return Array.isArray(parsed) ? (parsed as T[]) : [];
  } catch (err) {
    throw new LinkError('REFUSED', what, `output is not JSON (${describeError(err)})`, err);
  }
}

function arpingFailure(device: string, ip: string, detail: string, cause?: unknown): LinkError {
  return new LinkError('PROBE_FAILED', `duplicate address probe for ${ip} on ${device} (arping -D)`, detail, cause);
}

/**
 * The real {@link LinkPort}: `ip -json` reads and `ip link|address|route` changes through Exec
 * (iproute2), and duplicate address detection with `arping -D -c 2 -w 1 -I <device> <ip>`
 * (iputils-arping: exit 0 = nobody answered, 1 = answered).
 */
export function createIpLinks(exec: Exec): LinkPort {
  return {
    async links(): Promise<LinkState[]> {
      const rows = await readJson<IpLinkJson>(exec, ['-json', '-d', 'link', 'show']);
      return rows.filter((l) => typeof l.ifname === 'string').map((l) => ({
        name: l.ifname as string,
        mtu: l.mtu ?? 0,
        up: (l.flags ?? []).includes('UP'),
        carrier: (l.flags ?? []).includes('UP') && !(l.flags ?? []).includes('NO-CARRIER'),
        master: l.master,
        kind: l.linkinfo?.info_kind,
      }));
    },
    async addresses(): Promise<AddressState[]> {
      const rows = await readJson<IpAddrJson>(exec, ['-json', '-4', 'address', 'show']);
      return rows.flatMap((l) =>
        (l.addr_info ?? [])
          .filter((a) => a.family === 'inet' && typeof a.local === 'string' && typeof a.prefixlen === 'number')
          .map((a) => ({ device: l.ifname ?? '', ip: a.local as string, prefix: a.prefixlen as number })),
      );
    },
    async defaultRoutes(): Promise<RouteState[]> {
      const rows = await readJson<IpRouteJson>(exec, ['-json', '-4', 'route', 'show', 'default']);
      return rows.map((r) => ({ gateway: r.gateway, device: r.dev, metric: r.metric }));
    },
    async apply(op: LinkOp): Promise<void> {
      const r = await exec.run('ip', ipArgs(op), { timeoutMs: TIMEOUT_MS });
      if (r.exitCode === 0) return;
      const stderr = r.stderr.trim() || `exit ${r.exitCode}`;
      throw new LinkError(classify(op, stderr), describeLinkOp(op), stderr);
    },
    async probeAddress(device: string, ip: string): Promise<AddressProbe> {
      let r;
      try {
        r = await exec.run('arping', ['-D', '-c', '2', '-w', '1', '-I', device, ip], { timeoutMs: TIMEOUT_MS });
      } catch (err) {
        if (err instanceof AbortedError) throw err;
        throw arpingFailure(device, ip, `${describeError(err)} (arping comes with the Debian package iputils-arping)`, err);
      }
      if (r.exitCode === 0) return { inUse: false };
      if (r.exitCode === 1) return { inUse: true, by: /\[([0-9A-Fa-f:]{17})\]/.exec(r.stdout)?.[1]?.toLowerCase() };
      const detail = r.stderr.trim() || r.stdout.trim().split('\n').pop() || `exit ${r.exitCode}`;
      throw arpingFailure(device, ip, r.exitCode === 127 ? `${detail} (arping comes with the Debian package iputils-arping)` : detail);
    },
  };
}
