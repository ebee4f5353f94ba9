/** An in-memory {@link DnsStore} for unit tests, with failure knobs. */
import { DnsError } from '../errors.js';
import { DNS_DATABASE_KEY } from '../settings.js';
import type { DnsStore } from '../store.js';
import { bumpSerial, type NetworkZone, type StoredRecord, type ZoneRecord } from '../zone.js';

interface Domain {
  readonly account: string;
  records: (ZoneRecord & { id: string })[];
}

/** The fake. `down`: every call fails as a database that is unreachable; `calls` counts attempts. */
export class FakeDnsStore implements DnsStore {
  readonly domains = new Map<string, Domain>();
  schemaLoaded = false;
  down = false;
  calls = 0;
  private nextId = 1;

  private check(): void {
    this.calls++;
    if (this.down) throw new DnsError('DNS_DATABASE', `${DNS_DATABASE_KEY}: connecting on database "pvcdns" at localhost:5432 as "pvcdns" failed: connect ECONNREFUSED 127.0.0.1:5432`);
  }

  /** The records of a domain as `name type content` lines (tests). */
  lines(domain: string): string[] {
    return (this.domains.get(domain)?.records ?? []).map((r) => `${r.name} ${r.type} ${r.content}`).sort();
  }

  ensureSchema(): Promise<boolean> {
    this.check();
    const loaded = !this.schemaLoaded;
    this.schemaLoaded = true;
    return Promise.resolve(loaded);
  }

  internalDomains(): Promise<string[]> {
    this.check();
    return Promise.resolve([...this.domains.entries()].filter(([, d]) => d.account === 'internal').map(([n]) => n).sort());
  }

  addDomain(zone: NetworkZone): Promise<void> {
    this.check();
    this.domains.set(zone.domain, { account: 'internal', records: zone.records.map((r) => ({ ...r, id: String(this.nextId++) })) });
    return Promise.resolve();
  }

  removeDomain(domain: string): Promise<void> {
    this.check();
    this.domains.delete(domain);
    return Promise.resolve();
  }

  addressRecords(domain: string): Promise<StoredRecord[] | undefined> {
    this.check();
    const d = this.domains.get(domain);
    return Promise.resolve(d?.records.filter((r) => r.type === 'A' || r.type === 'AAAA'));
  }

  applyZone(domain: string, sync: { deletes: readonly string[]; inserts: readonly ZoneRecord[] }): Promise<string | undefined> {
    this.check();
    const d = this.domains.get(domain);
    if (!d) return Promise.resolve(undefined);
    d.records = d.records.filter((r) => !sync.deletes.includes(r.id));
    d.records.push(...sync.inserts.map((r) => ({ ...r, id: String(this.nextId++) })));
    const soa = d.records.find((r) => r.type === 'SOA');
    if (!soa) return Promise.resolve(undefined);
    const content = bumpSerial(soa.content);
    d.records = d.records.map((r) => (r === soa ? { ...r, content } : r));
    return Promise.resolve(content);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
