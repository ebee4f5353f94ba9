/**
 * The real {@link Ipmi} adapter: `ipmitool -I lanplus` run through the Exec port.
 *
 * - The password travels in the environment (`-E` reads `IPMI_PASSWORD`), never on the command
 *   line, so it is not visible in `ps`/`/proc/<pid>/cmdline` (environments are readable only by the
 *   process owner and root). It is also passed to Exec as a secret, so any echo of it is masked.
 * - Every call is bounded twice: ipmitool's own LAN timeout/retries (`-N`/`-R`, sized to give up
 *   before the deadline: left alone, ipmitool waits ~20 s on a silent BMC) and Exec's `timeoutMs`.
 * - `-C` is always passed: without it ipmitool first asks for the channel's cipher suites, which
 *   some BMCs (ipmi_sim among them) never answer, adding ~10 s to every call.
 * - `-v` is always passed: only then does ipmitool print why a session failed ("RAKP 2 HMAC is
 *   invalid", "unauthorized name"), which separates IPMI_AUTH from IPMI_UNREACHABLE. Its chatter
 *   goes to stderr; stdout keeps only the answer.
 */
import { AbortedError, TimeoutError } from '@pvc/runtime';
import type { Exec, ExecResult } from '@pvc/runtime';
import { bmcName, DEFAULT_CIPHER_SUITE, DEFAULT_IPMI_PORT, DEFAULT_IPMI_TIMEOUT_MS, IpmiError } from './ipmi.js';
import type { Ipmi, IpmiCallOptions, IpmiOperation, IpmiTarget } from './ipmi.js';
import { parsePowerControl, parsePowerStatus } from './ipmitool-output.js';

/** Options of {@link createIpmitoolIpmi}. */
export interface IpmitoolIpmiOptions {
  /** The binary. Default `ipmitool`. */
  command?: string;
  /** Bound of a call whose options give none, ms. Default {@link DEFAULT_IPMI_TIMEOUT_MS}. */
  defaultTimeoutMs?: number;
}

/**
 * ipmitool's `-N` (seconds per try) for a deadline. With `-R 1`, ipmitool (lanplus) gives up on a
 * silent BMC after about 2 × N seconds (measured: N=1 → 2.0 s, N=2 → 4.1 s; the default -N 1 -R 4
 * takes 20 s), so N is chosen to give up about half a second before the deadline.
 */
export function lanTimeoutSeconds(timeoutMs: number): number {
  return Math.max(1, Math.floor((timeoutMs - 500) / 2000));
}

/** The full argument list of one call (the password is not in it: see `-E`). */
export function ipmitoolArgs(target: IpmiTarget, timeoutMs: number, op: IpmiOperation): string[] {
  return [
    '-v',
    '-I', 'lanplus',
    '-C', String(target.cipherSuite ?? DEFAULT_CIPHER_SUITE),
    '-N', String(lanTimeoutSeconds(timeoutMs)),
    '-R', '1',
    '-H', target.host,
    '-p', String(target.port ?? DEFAULT_IPMI_PORT),
    '-U', target.user,
    '-E',
    'chassis', ...op.split(' '),
  ];
}

/** Builds the real adapter over `exec` (createExec() or an Exec that runs inside another namespace). */
export function createIpmitoolIpmi(exec: Exec, options: IpmitoolIpmiOptions = {}): Ipmi {
  const command = options.command ?? 'ipmitool';
  const defaultTimeoutMs = options.defaultTimeoutMs ?? DEFAULT_IPMI_TIMEOUT_MS;

  const run = async (target: IpmiTarget, op: IpmiOperation, opts: IpmiCallOptions = {}): Promise<ExecResult> => {
    const timeoutMs = opts.timeoutMs ?? defaultTimeoutMs;
    try {
      return await exec.run(command, ipmitoolArgs(target, timeoutMs, op), {
        timeoutMs,
        signal: opts.signal,
        env: { IPMI_PASSWORD: target.pass },
        secrets: [target.pass],
      });
    } catch (err) {
      if (err instanceof AbortedError) throw err;
      if (err instanceof TimeoutError) {
        throw new IpmiError('IPMI_UNREACHABLE', bmcName(target), op, `no answer within ${timeoutMs} ms`, err);
      }
      throw err; // e.g. ExecError: ipmitool missing (its message is already masked by Exec)
    }
  };

  return {
    async powerStatus(target, opts) {
      return parsePowerStatus(bmcName(target), await run(target, 'power status', opts), [target.pass]);
    },
    async powerOff(target, opts) {
      parsePowerControl(bmcName(target), 'power off', await run(target, 'power off', opts), [target.pass]);
    },
    async powerOn(target, opts) {
      parsePowerControl(bmcName(target), 'power on', await run(target, 'power on', opts), [target.pass]);
    },
  };
}
