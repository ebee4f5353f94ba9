/**
 * The real {@link UserDataSource}: a small `pg` pool to the provisioner database, reading the
 * original's tables as its metadata API does (`profile JOIN userdata`). Connections are made on
 * demand, so once the server is back the next call works again. The password goes only to `pg`;
 * messages name the config key, host, port, database and user.
 *
 * @module
 */
import pg from 'pg';
import type { DatabaseSettings } from '@pvc/config';
import { METADATA_DB_KEY, UserDataError, type UserDataFailure, type UserDataSource } from './user-data.js';

/** The original's query (MetadataAPIInstance.get_profile_userdata). */
export const USERDATA_QUERY = 'SELECT userdata.userdata FROM profile JOIN userdata ON profile.userdata = userdata.id WHERE profile.name = $1';
const CHECK_QUERY = 'SELECT userdata.userdata FROM profile JOIN userdata ON profile.userdata = userdata.id WHERE false';

/** Options of {@link createPgUserData}. */
export interface PgUserDataOptions {
  /** Bound of one connection attempt (default 3 s). */
  readonly connectTimeoutMs?: number;
  /** Bound of one query (default 5 s). */
  readonly queryTimeoutMs?: number;
}

function reasonOf(err: unknown): UserDataFailure {
  const code = (err as { code?: string }).code;
  if (code === '28P01' || code === '28000') return 'refused-credentials';
  if (code === '3D000') return 'no-database';
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EHOSTUNREACH' || code === 'ECONNRESET' || code === '57P01' || /timeout|terminat|Connection/i.test(String((err as Error).message))) return 'unreachable';
  return 'query-failed';
}

/** Builds the real port for `db` (the settings of `coordinator.metadata.database`). */
export function createPgUserData(db: DatabaseSettings, o: PgUserDataOptions = {}): UserDataSource {
  const pool = new pg.Pool({
    host: db.host, port: db.port, database: db.name, user: db.user, password: db.pass,
    max: 4, idleTimeoutMillis: 10_000, allowExitOnIdle: true, connectionTimeoutMillis: o.connectTimeoutMs ?? 3_000, query_timeout: o.queryTimeoutMs ?? 5_000,
  });
  // An idle connection the server closes emits here; the pool drops it and connects anew on demand.
  pool.on('error', () => undefined);
  const where = `database "${db.name}" at ${db.host}:${db.port} as "${db.user}"`;
  const run = async (sql: string, args: string[]): Promise<pg.QueryResult<{ userdata: string | null }>> => {
    try {
      return await pool.query<{ userdata: string | null }>(sql, args);
    } catch (err) {
      const reason = reasonOf(err);
      const hint = reason === 'refused-credentials' ? ` (check ${METADATA_DB_KEY}.user and ${METADATA_DB_KEY}.pass)` : '';
      throw new UserDataError(reason, `${METADATA_DB_KEY}: ${where}: ${(err as Error).message}${hint}`, err);
    }
  };
  return {
    async forProfile(profile) {
      const r = await run(USERDATA_QUERY, [profile]);
      return r.rows[0]?.userdata ?? null;
    },
    async check() {
      await run(CHECK_QUERY, []);
    },
    close: () => pool.end(),
  };
}
