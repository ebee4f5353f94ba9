/**
 * The port through which the aggregator takes a network's zone from its dnsmasq (AXFR), and its
 * real adapter: Debian's `dig` (package `bind9-dnsutils`) through the Exec port, one TCP transfer
 * of at most 5 s (the original's lifetime), from the gateway address itself (`-b`), so dnsmasq's
 * `--auth-peer=<gateway>` lets it through.
 *
 * @module
 */
import { describeError, type Exec } from '@pvc/runtime';
import { DnsError } from './errors.js';
import { parseAxfr, type ZoneRecord } from './zone.js';

/** Takes zones by AXFR. */
export interface AxfrPort {
  /** The A and AAAA records of `domain` from the DNS server at `server`; throws `DnsError` `AXFR_FAILED`. */
  transfer(server: string, domain: string, signal?: AbortSignal): Promise<readonly ZoneRecord[]>;
}

/** Options of {@link createDigAxfr}. */
export interface DigAxfrOptions {
  /** dnsmasq's DNS port (default 53; tests use another). */
  readonly port?: number;
  /** Bound of one transfer (default 5 s, the original's lifetime). */
  readonly timeoutMs?: number;
  /** A prefix to the dig command (tests: `ip netns exec <ns>`). */
  readonly prefix?: readonly string[];
}

/** The real AXFR client (see the module comment). */
export function createDigAxfr(exec: Exec, o: DigAxfrOptions = {}): AxfrPort {
  const timeoutMs = o.timeoutMs ?? 5_000;
  const seconds = Math.max(1, Math.ceil(timeoutMs / 1000));
  return {
    async transfer(server, domain, signal) {
      const args = ['+noall', '+answer', '+tries=1', `+time=${seconds}`, '-b', server, '-p', String(o.port ?? 53), `@${server}`, domain, 'AXFR'];
      const [command, ...rest] = [...(o.prefix ?? []), 'dig', ...args];
      let out;
      try {
        out = await exec.run(command!, rest, { timeoutMs: timeoutMs + 1_000, signal });
      } catch (err) {
        throw new DnsError('AXFR_FAILED', `AXFR of ${domain} from ${server}: ${describeError(err)}`, err);
      }
      const answer = parseAxfr(out.stdout, domain);
      if (out.exitCode !== 0 || !answer.complete) {
        const why = [...out.stdout.split('\n'), ...out.stderr.split('\n')].map((l) => l.replace(/^;+\s*/, '').trim()).filter(Boolean).slice(-2).join('; ');
        throw new DnsError('AXFR_FAILED', `AXFR of ${domain} from ${server} failed (dig exit ${out.exitCode}${why ? `: ${why}` : ''})`);
      }
      return answer.records;
    },
  };
}
