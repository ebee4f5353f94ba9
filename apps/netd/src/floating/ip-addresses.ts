/**
 * The real {@link AddressPort}: `ip -json -4 address show dev`, `ip address add|del` and iputils
 * `arping -U` (Debian `iputils-arping`) through the Exec port, each with a deadline.
 *
 * @module
 */
import { describeError, type Exec, type ExecResult } from '@pvc/runtime';
import { AddressError, type AddressPort } from './address-port.js';

/** Options of {@link createIpAddresses}. */
export interface IpAddressesOptions {
  exec: Exec;
  /**
   * The command line before `ip`/`arping` (default none): tests run them in a network namespace
   * with `['ip', 'netns', 'exec', '<ns>']`.
   */
  prefix?: readonly string[];
  /** Deadline of one call, ms (default 5000). */
  timeoutMs?: number;
}

/** Gratuitous ARP: 2 unsolicited requests 50 ms apart (the original: 2, `-W 0.02`). */
const ARPING = ['-U', '-c', '2', '-i', '0.05', '-w', '1'];

const NO_DEVICE = /Cannot find device|does not exist/i;

export function createIpAddresses(o: IpAddressesOptions): AddressPort {
  const timeoutMs = o.timeoutMs ?? 5_000;
  const run = async (cmd: string, args: string[]): Promise<ExecResult> => {
    const [command, ...pre] = [...(o.prefix ?? []), cmd];
    try {
      return await o.exec.run(command!, [...pre, ...args], { timeoutMs });
    } catch (err) {
      throw new AddressError('UNAVAILABLE', `${cmd} ${args.join(' ')}: ${describeError(err)}`, err);
    }
  };
  const fail = (r: ExecResult, what: string): AddressError => {
    const msg = r.stderr.trim() || r.stdout.trim() || `exit status ${r.exitCode}`;
    return new AddressError(NO_DEVICE.test(msg) ? 'NO_DEVICE' : 'REFUSED', `${what}: ${msg}`);
  };
  return {
    async list(device) {
      const r = await run('ip', ['-json', '-4', 'address', 'show', 'dev', device]);
      if (r.exitCode !== 0) throw fail(r, `list the addresses of ${device}`);
      const links = JSON.parse(r.stdout || '[]') as { addr_info?: { family?: string; local?: string; prefixlen?: number }[] }[];
      return links.flatMap((l) => (l.addr_info ?? []).filter((a) => a.local !== undefined).map((a) => `${a.local}/${a.prefixlen ?? 32}`));
    },
    async add(cidr, device) {
      const r = await run('ip', ['address', 'add', cidr, 'dev', device]);
      // Already there: "File exists" (older kernels), "Address already assigned" (with extack).
      if (r.exitCode !== 0 && !/File exists|Address already assigned/i.test(r.stderr)) throw fail(r, `add ${cidr} on ${device}`);
    },
    async remove(cidr, device) {
      const r = await run('ip', ['address', 'del', cidr, 'dev', device]);
      if (r.exitCode === 0) return;
      // Not there, or the device is gone with it: done.
      if (/Cannot assign requested address|Address not found|Cannot find device|does not exist/i.test(r.stderr)) return;
      throw fail(r, `remove ${cidr} from ${device}`);
    },
    async announce(ip, device) {
      const r = await run('arping', [...ARPING, '-I', device, ip]);
      // arping exits 1 when nobody answered; unsolicited requests expect no answer.
      if (r.exitCode !== 0 && r.exitCode !== 1) throw fail(r, `announce ${ip} on ${device}`);
      if (r.exitCode === 1 && /bind|socket|No such device|unknown iface|Interface .* is down/i.test(r.stderr)) throw fail(r, `announce ${ip} on ${device}`);
    },
  };
}
