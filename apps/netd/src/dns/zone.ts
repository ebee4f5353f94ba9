/**
 * The DNS aggregator's zone data (pvc-inventory §7.3), pure: the rows a managed network's zone gets
 * in PowerDNS's database (SOA and NS as the original writes them), the domains to add and remove,
 * dig's AXFR answer parsed, and the difference between a network's dnsmasq zone and its stored
 * address records. Specs in `zone.spec.ts`.
 *
 * Differences from the original, each deliberate:
 * - the sync is a plain set difference on (name, TTL, type, content): the original also deleted a
 *   stored record that was still served whenever a new record of the same name and type appeared
 *   (a host with a second address lost its first until the next pass, then the two flapped) **[bug?]**;
 * - only A and AAAA records of the transfer are taken (the original took every record but the
 *   first node's, so a CNAME or TXT from dnsmasq was inserted again at every pass);
 * - duplicate stored rows of one record are deleted down to one;
 * - names are lowercased (the gpgsql schema refuses upper case) and carry no trailing dot.
 *
 * @module
 */

/** TTL and SOA timers of the zone rows the aggregator writes (pvc-inventory §7.3, timing table). */
export const ZONE_TTL = 86_400;

/** One DNS record as PowerDNS stores it (`records`: name, ttl, type, content). */
export interface ZoneRecord {
  /** Fully qualified, lower case, no trailing dot. */
  readonly name: string;
  readonly ttl: number;
  readonly type: string;
  readonly content: string;
}

/** A stored record with its row id. */
export interface StoredRecord extends ZoneRecord {
  readonly id: string;
}

/** What the aggregator needs of one managed network (decoded from `/networks/<vni>`). */
export interface AggregatedNetwork {
  readonly vni: number;
  /** `domain` */
  readonly domain: string;
  /** Where its dnsmasq answers AXFR: the IPv4 gateway, else the IPv6 one (as the original). */
  readonly server: string;
  /** `name_servers`; empty = `pvc-dns.<upstream domain>`. */
  readonly nameServers: readonly string[];
}

/** The `domains` row and the fixed records of one network's zone. */
export interface NetworkZone {
  readonly domain: string;
  /** SOA, then one NS per name server. */
  readonly records: readonly ZoneRecord[];
}

/** Lower case, no trailing dot. */
export function canonicalName(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}

/**
 * The zone of `network` as the original inserts it: SOA
 * `nsX.<upstream> root.<upstream> 1 10800 1800 86400 86400` and NS records naming the network's
 * name servers, or `pvc-dns.<upstream>` when it has none; TTL 86400, all at the zone's apex.
 */
export function networkZone(network: Pick<AggregatedNetwork, 'domain' | 'nameServers'>, upstreamDomain: string): NetworkZone {
  const domain = canonicalName(network.domain);
  const up = canonicalName(upstreamDomain);
  const servers = network.nameServers.length > 0 ? network.nameServers : [`pvc-dns.${up}`];
  return {
    domain,
    records: [
      { name: domain, ttl: ZONE_TTL, type: 'SOA', content: `nsX.${up} root.${up} 1 10800 1800 86400 86400` },
      ...servers.map((ns) => ({ name: domain, ttl: ZONE_TTL, type: 'NS', content: ns })),
    ],
  };
}

/** Which domains to add and which to remove (only domains the aggregator made: account `internal`). */
export interface DomainPlan {
  readonly add: readonly NetworkZone[];
  readonly remove: readonly string[];
}

/** Compares the wanted zones with the `internal` domains in the database. */
export function planDomains(wanted: readonly NetworkZone[], stored: readonly string[]): DomainPlan {
  const want = new Set(wanted.map((z) => z.domain));
  const have = new Set(stored.map(canonicalName));
  return {
    add: wanted.filter((z) => !have.has(z.domain)),
    remove: [...have].filter((d) => !want.has(d)).sort(),
  };
}

/** What dig printed for one AXFR: the zone's records, and whether the transfer was complete. */
export interface AxfrAnswer {
  /** The A and AAAA records in the zone (see the module comment). */
  readonly records: readonly ZoneRecord[];
  /** A complete transfer starts with the SOA: false when dig got none (refused, failed, cut). */
  readonly complete: boolean;
}

/** Parses `dig +noall +answer AXFR <domain>` output (`name ttl class type data…`, one a line). */
export function parseAxfr(text: string, domain: string): AxfrAnswer {
  const zone = canonicalName(domain);
  const records: ZoneRecord[] = [];
  let soas = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '' || line.startsWith(';')) continue;
    const [rawName, ttl, klass, type, ...data] = line.trim().split(/\s+/);
    if (rawName === undefined || ttl === undefined || klass !== 'IN' || type === undefined || !/^\d+$/.test(ttl)) continue;
    const name = canonicalName(rawName);
    if (type === 'SOA' && name === zone) soas++;
    if (type !== 'A' && type !== 'AAAA') continue;
    if (name !== zone && !name.endsWith(`.${zone}`)) continue;
    records.push({ name, ttl: Number(ttl), type, content: data.join(' ').toLowerCase() });
  }
  // An AXFR answer begins and ends with the SOA.
  return { records, complete: soas >= 2 };
}

/** The changes that make a zone's stored address records equal to the transfer. */
export interface ZoneSync {
  /** Row ids of stored records that vanished, changed, or are duplicates. */
  readonly deletes: readonly string[];
  readonly inserts: readonly ZoneRecord[];
  /** Something changes: the SOA serial is bumped and PowerDNS told to reload the zone. */
  readonly changed: boolean;
}

const keyOf = (r: ZoneRecord): string => `${r.name} ${r.ttl} ${r.type} ${r.content}`;

/** Transfer (A/AAAA) vs stored (A/AAAA rows of the zone) → deletes and inserts. */
export function planZoneSync(transferred: readonly ZoneRecord[], stored: readonly StoredRecord[]): ZoneSync {
  const want = new Map(transferred.map((r) => [keyOf(r), r]));
  const kept = new Set<string>();
  const deletes: string[] = [];
  for (const r of stored) {
    const k = keyOf(r);
    if (want.has(k) && !kept.has(k)) kept.add(k);
    else deletes.push(r.id);
  }
  const inserts = [...want.entries()].filter(([k]) => !kept.has(k)).map(([, r]) => r);
  return { deletes, inserts, changed: deletes.length > 0 || inserts.length > 0 };
}

/** The SOA content with its serial (third field) plus one, modulo 2^32 skipping 0 (RFC 1982). */
export function bumpSerial(soaContent: string): string {
  const fields = soaContent.trim().split(/\s+/);
  const serial = Number(fields[2]);
  if (fields.length < 7 || !Number.isInteger(serial) || serial < 0) return soaContent;
  const next = (serial + 1) % 2 ** 32;
  fields[2] = String(next === 0 ? 1 : next);
  return fields.join(' ');
}
