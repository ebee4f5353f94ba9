/**
 * The original provisioner's tables that netd's metadata API reads (`profile`, `userdata`, and
 * what `profile` references; columns as the original's api-daemon models define them), for a
 * {@link PgTestServer}: the role and database of `coordinator.metadata.database`, the tables owned
 * by that role, one user-data row and one profile per entry. Also the role and database of
 * `coordinator.dns.database` (the DNS aggregator loads PowerDNS's schema into it itself).
 */
import type { PgTestServer } from './postgres-server.js';

/** One provisioner profile and the user-data it points at. */
export interface ProfileUserData {
  profile: string;
  /** null: a profile without user-data (`profile.userdata` NULL). */
  userdata: string | null;
}

const lit = (s: string): string => `'${s.replace(/'/g, "''")}'`;
const ident = (s: string): string => {
  if (!/^[a-z_][a-z0-9_]*$/.test(s)) throw new Error(`provisioner-db: ${JSON.stringify(s)} is not a plain SQL identifier`);
  return s;
};

/** The provisioner's tables and rows, created as `role` (which must own the current database). */
export function provisionerSchema(role: string, profiles: readonly ProfileUserData[]): string {
  const rows = profiles.map((p) => {
    const ud = p.userdata === null ? 'NULL' : `(SELECT id FROM userdata WHERE name = ${lit(`${p.profile}-ud`)})`;
    return [
      ...(p.userdata === null ? [] : [`INSERT INTO userdata (name, userdata) VALUES (${lit(`${p.profile}-ud`)}, ${lit(p.userdata)});`]),
      `INSERT INTO profile (name, profile_type, system_template, userdata, script) VALUES (${lit(p.profile)}, 'provisioner', 1, ${ud}, 1);`,
    ].join('\n');
  });
  return `SET ROLE ${ident(role)};
CREATE TABLE system_template (id serial PRIMARY KEY, name text NOT NULL UNIQUE, vcpu_count integer NOT NULL, vram_mb integer NOT NULL, serial boolean NOT NULL, vnc boolean NOT NULL, vnc_bind text, node_limit text, node_selector text, node_autostart boolean NOT NULL, migration_method text, migration_max_downtime integer DEFAULT 300, ova integer);
CREATE TABLE script (id serial PRIMARY KEY, name text NOT NULL UNIQUE, script text NOT NULL);
CREATE TABLE userdata (id serial PRIMARY KEY, name text NOT NULL UNIQUE, userdata text NOT NULL);
CREATE TABLE profile (id serial PRIMARY KEY, name text NOT NULL UNIQUE, profile_type text NOT NULL, system_template integer NOT NULL REFERENCES system_template(id), network_template integer, storage_template integer, userdata integer REFERENCES userdata(id), script integer NOT NULL REFERENCES script(id), ova integer, arguments text);
INSERT INTO system_template (name, vcpu_count, vram_mb, serial, vnc, node_autostart) VALUES ('small', 1, 1024, true, false, false);
INSERT INTO script (name, script) VALUES ('noop', '#!/usr/bin/env python3');
${rows.join('\n')}`;
}

/** A login role with a password and a database it owns, on `pg` (as its superuser). */
export function createRoleAndDatabase(pg: PgTestServer, db: { name: string; user: string; pass: string }): void {
  pg.sql(`CREATE ROLE ${ident(db.user)} LOGIN PASSWORD ${lit(db.pass)}`);
  pg.sql(`CREATE DATABASE ${ident(db.name)} OWNER ${ident(db.user)}`);
}
