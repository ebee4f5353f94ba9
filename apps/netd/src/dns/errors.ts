/** The DNS aggregator's errors. Every database message names the config key `coordinator.dns.database`. */
import { PvcError } from '@pvc/runtime';

/**
 * - `DNS_DATABASE`: PowerDNS's database is unreachable, refuses the credentials, or a statement
 *   failed; retried with backoff.
 * - `DNS_SCHEMA`: the gpgsql schema file could not be read (package `pdns-backend-pgsql` missing).
 * - `PDNS_START_FAILED`: pdns_server exited at start (the message carries its last log lines).
 * - `AXFR_FAILED`: a network's dnsmasq did not hand over its zone (that network waits for the next pass).
 */
export type DnsErrorCode = 'DNS_DATABASE' | 'DNS_SCHEMA' | 'PDNS_START_FAILED' | 'AXFR_FAILED';

/** An error of the DNS aggregator. */
export class DnsError extends PvcError {
  constructor(code: DnsErrorCode, message: string, cause?: unknown) {
    super(code, message, { cause, retryable: true });
  }
}
