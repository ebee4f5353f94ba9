/**
 * The port to PowerDNS's database (the gpgsql schema: `domains`, `records`). The aggregator is
 * the only writer of the domains whose `account` is `internal`; it never touches other domains.
 * Real adapter: `pg-store.ts`; fake: `testing/fake-store.ts`.
 *
 * @module
 */
import type { NetworkZone, StoredRecord, ZoneSync } from './zone.js';

/** PowerDNS's database, as the aggregator uses it. Every method throws `DnsError` `DNS_DATABASE`. */
export interface DnsStore {
  /** Loads the gpgsql schema when its tables are absent; true when it loaded it now. */
  ensureSchema(): Promise<boolean>;
  /** The names of the `internal` domains. */
  internalDomains(): Promise<string[]>;
  /** Inserts the domain (MASTER, account internal) and its SOA and NS rows, in one transaction. */
  addDomain(zone: NetworkZone): Promise<void>;
  /** Deletes the domain and its records. */
  removeDomain(domain: string): Promise<void>;
  /** The A and AAAA rows of the domain; undefined when the domain is absent. */
  addressRecords(domain: string): Promise<StoredRecord[] | undefined>;
  /** Deletes, inserts and bumps the SOA serial in one transaction; returns the new SOA content. */
  applyZone(domain: string, sync: ZoneSync): Promise<string | undefined>;
  /** Closes the connections (a later call opens new ones). */
  close(): Promise<void>;
}
