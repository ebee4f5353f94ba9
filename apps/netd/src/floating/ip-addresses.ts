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

/**
 * Gratuitous ARP: 2 unsolicited requests, the first at once, the second 1 s later in case the first
 * is lost (the original sends 2 with `-W 0.02`, an option of another arping). iputils' `-i` and
 * `-w` take whole seconds only: `-i 0.05` is refused with "invalid argument" and exit status 1,
 * and nothing is sent. The call takes ~2 s; netd does not wait for it (floating.ts).
 */
const ARPING = ['-U', '-c', '2', '-w', '2'];

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
      // Exit status 1 with nothing on stderr means "no reply", which unsolicited requests do not
      // expect; anything else that is not 0 (a refused option, no such device, an address not on
      // the device) means nothing was sent.
      if (r.exitCode !== 0 && !(r.exitCode === 1 && r.stderr.trim() === '')) throw fail(r, `announce ${ip} on ${device}`);
    },
  };
}
