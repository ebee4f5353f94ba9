/**
 * The real {@link DnsStore}: the `pg` client over TCP as `coordinator.dns.database`'s user (a pool
 * of at most 2 connections; a connection broken by a database restart is dropped and a new one
 * opened at the next call). The SQL is the original's (`DNSAggregatorInstance.py`), with
 * parameters, the domain's changes in one transaction.
 *
 * Schema: the gpgsql schema Debian ships (`pdns-backend-pgsql`) is loaded by {@link DnsStore.ensureSchema}
 * when the `domains` table is absent (the supervisor creates only the role and the database).
 *
 * @module
 */
import { readFile } from 'node:fs/promises';
import pg from 'pg';
import { describeError } from '@pvc/runtime';
import type { DatabaseSettings } from '@pvc/config';
import { DnsError } from './errors.js';
import { DNS_DATABASE_KEY } from './settings.js';
import type { DnsStore } from './store.js';
import { bumpSerial, type StoredRecord } from './zone.js';

/** Debian's gpgsql schema (package `pdns-backend-pgsql`). */
export const GPGSQL_SCHEMA = '/usr/share/pdns-backend-pgsql/schema/schema.pgsql.sql';

/** Options of {@link createPgDnsStore}. */
export interface PgDnsStoreOptions {
  /** The schema file (default {@link GPGSQL_SCHEMA}). */
  readonly schemaFile?: string;
  /** Bound of a connection attempt (default 5 s). */
  readonly connectTimeoutMs?: number;
}

/** A database failure as a {@link DnsError} naming the config key, never the password. */
export function databaseError(db: DatabaseSettings, what: string, err: unknown): DnsError {
  const code = (err as { code?: string }).code;
  const hint = code === '28P01' || code === '28000' ? ` (check ${DNS_DATABASE_KEY}.user and ${DNS_DATABASE_KEY}.pass)` : code === '3D000' ? ` (check ${DNS_DATABASE_KEY}.name)` : '';
  return new DnsError('DNS_DATABASE', `${DNS_DATABASE_KEY}: ${what} on database "${db.name}" at ${db.host}:${db.port} as "${db.user}" failed: ${describeError(err)}${hint}`, err);
}

/** The real store (see the module comment). */
export function createPgDnsStore(db: DatabaseSettings, o: PgDnsStoreOptions = {}): DnsStore {
  let pool: pg.Pool | undefined;
  const open = (): pg.Pool => {
    if (pool) return pool;
    const p = new pg.Pool({ host: db.host, port: db.port, user: db.user, password: db.pass, database: db.name, max: 2, connectionTimeoutMillis: o.connectTimeoutMs ?? 5_000, idleTimeoutMillis: 30_000 });
    // An idle connection dropped by the server must not become an unhandled 'error' event.
    p.on('error', () => undefined);
    pool = p;
    return p;
  };
  const guard = async <T>(what: string, fn: (c: pg.PoolClient) => Promise<T>, tx = false): Promise<T> => {
    let client: pg.PoolClient;
    try {
      client = await open().connect();
    } catch (err) {
      throw databaseError(db, 'connecting', err);
    }
    let broken: Error | undefined;
    try {
      if (tx) await client.query('BEGIN');
      const r = await fn(client);
      if (tx) await client.query('COMMIT');
      return r;
    } catch (err) {
      if (tx) await client.query('ROLLBACK').catch((e: unknown) => (broken = e as Error));
      broken ??= err as Error;
      throw err instanceof DnsError ? err : databaseError(db, what, err);
    } finally {
      client.release(broken);
    }
  };
  const domainId = async (c: pg.PoolClient, domain: string): Promise<number | undefined> =>
    (await c.query<{ id: number }>('SELECT id FROM domains WHERE name=$1', [domain])).rows[0]?.id;

  return {
    ensureSchema: () => guard('loading the PowerDNS schema', async (c) => {
      const present = (await c.query<{ t: string | null }>("SELECT to_regclass('domains')::text AS t")).rows[0]?.t;
      if (present) return false;
      const file = o.schemaFile ?? GPGSQL_SCHEMA;
      let sql: string;
      try {
        sql = await readFile(file, 'utf8');
      } catch (err) {
        throw new DnsError('DNS_SCHEMA', `the PowerDNS schema ${file} cannot be read (package pdns-backend-pgsql): ${describeError(err)}`, err);
      }
      await c.query(sql);
      return true;
    }, true),
    internalDomains: () => guard('listing the domains', async (c) =>
      (await c.query<{ name: string }>("SELECT name FROM domains WHERE account='internal' ORDER BY name")).rows.map((r) => r.name)),
    addDomain: (zone) => guard(`adding domain ${zone.domain}`, async (c) => {
      const id = (await c.query<{ id: number }>("INSERT INTO domains (name, type, account, notified_serial) VALUES ($1, 'MASTER', 'internal', 0) RETURNING id", [zone.domain])).rows[0]?.id;
      for (const r of zone.records) {
        await c.query('INSERT INTO records (domain_id, name, content, type, ttl, prio) VALUES ($1, $2, $3, $4, $5, 0)', [id, r.name, r.content, r.type, r.ttl]);
      }
    }, true),
    removeDomain: (domain) => guard(`removing domain ${domain}`, async (c) => {
      const id = await domainId(c, domain);
      if (id === undefined) return;
      await c.query('DELETE FROM records WHERE domain_id=$1', [id]);
      await c.query('DELETE FROM domains WHERE id=$1', [id]);
    }, true),
    addressRecords: (domain) => guard(`reading the records of ${domain}`, async (c) => {
      const id = await domainId(c, domain);
      if (id === undefined) return undefined;
      const rows = (await c.query<{ id: string; name: string; ttl: number; type: string; content: string }>(
        "SELECT id::text AS id, name, ttl, type, content FROM records WHERE domain_id=$1 AND type IN ('A', 'AAAA') ORDER BY id", [id])).rows;
      return rows.map((r): StoredRecord => ({ id: r.id, name: r.name, ttl: r.ttl, type: r.type, content: r.content }));
    }),
    applyZone: (domain, sync) => guard(`updating the records of ${domain}`, async (c) => {
      const id = await domainId(c, domain);
      if (id === undefined) return undefined;
      if (sync.deletes.length > 0) await c.query('DELETE FROM records WHERE domain_id=$1 AND id = ANY($2::bigint[])', [id, sync.deletes]);
      for (const r of sync.inserts) {
        await c.query('INSERT INTO records (domain_id, name, ttl, type, prio, content) VALUES ($1, $2, $3, $4, 0, $5)', [id, r.name, r.ttl, r.type, r.content]);
      }
      const soa = (await c.query<{ content: string }>("SELECT content FROM records WHERE domain_id=$1 AND type='SOA'", [id])).rows[0]?.content;
      if (soa === undefined) return undefined;
      const next = bumpSerial(soa);
      await c.query("UPDATE records SET content=$1 WHERE domain_id=$2 AND type='SOA'", [next, id]);
      return next;
    }, true),
    close: async () => {
      const p = pool;
      pool = undefined;
      await p?.end().catch(() => undefined);
    },
  };
}
