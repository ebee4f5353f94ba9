import { existsSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { describeError, PvcError, type Exec } from '@pvc/runtime';

/** One PostgreSQL database a coordinator service uses, as the config names it. */
export interface WantedDatabase {
  /** The config key of its settings, for every message about it. */
  readonly key: 'coordinator.dns.database' | 'coordinator.metadata.database';
  readonly host: string;
  readonly port: number;
  readonly name: string;
  readonly user: string;
  /** Secret: never logged, never on a command line. */
  readonly pass: string;
}

/** What {@link DatabaseAdmin.ensure} found or did on the local server. */
export type EnsureOutcome =
  | { readonly kind: 'ensured'; readonly createdRole: boolean; readonly createdDatabase: boolean }
  /** The local server is a standby (read-only): the primary's supervisor creates them. */
  | { readonly kind: 'replica' }
  /** No PostgreSQL of this host listens on that port (the database is elsewhere): nothing to create here. */
  | { readonly kind: 'no-local-server'; readonly socket: string };

/** The local server refused or failed the administration (code `DATABASE_ADMIN_FAILED`). */
export class DatabaseAdminError extends PvcError {
  constructor(message: string) {
    super('DATABASE_ADMIN_FAILED', message, { retryable: true });
  }
}

/** Logging in as the configured user failed (code `DATABASE_LOGIN_FAILED`); `reason` names why. */
export class DatabaseLoginError extends PvcError {
  constructor(
    message: string,
    readonly reason: 'refused-credentials' | 'no-database' | 'unreachable' | 'other',
  ) {
    super('DATABASE_LOGIN_FAILED', message, { retryable: true });
  }
}

/** The port to PostgreSQL for the coordinator databases. */
export interface DatabaseAdmin {
  /**
   * On the PostgreSQL server of this host at `db.port` (as its superuser, over the local socket):
   * creates the role (LOGIN, the configured password) and the database (owned by the role) when
   * absent. Leaves an existing role's password alone. `no-local-server` when this host has no
   * server on that port (its socket is absent): the database lives elsewhere. Throws
   * {@link DatabaseAdminError}.
   */
  ensure(db: WantedDatabase, opts?: { signal?: AbortSignal }): Promise<EnsureOutcome>;
  /** Logs in at `db.host:db.port` as the user with its password and runs `SELECT 1`; throws {@link DatabaseLoginError}. */
  login(db: WantedDatabase, opts?: { signal?: AbortSignal }): Promise<void>;
}

/** Options of {@link createPsqlDatabaseAdmin}. */
export interface PsqlAdminOptions {
  /** The server's unix socket directory (default Debian's `/var/run/postgresql`). */
  readonly socketDir?: string;
  /** The OS user that is the server's superuser by peer authentication (default `postgres`). */
  readonly osUser?: string;
  /** Bound of one login attempt (default 5 s). */
  readonly loginTimeoutMs?: number;
}

/**
 * The script psql runs: names and password come from its environment (`\getenv`), so they are in
 * no command line and need no quoting; `format(%I, %L)` quotes them for SQL. Prints `pvc-` lines.
 */
const ENSURE_SQL = String.raw`\set ON_ERROR_STOP on
\getenv dbuser PVC_DB_USER
\getenv dbname PVC_DB_NAME
\getenv dbpass PVC_DB_PASS
SELECT pg_is_in_recovery() AS replica \gset
\if :replica
\echo pvc-replica
\quit
\endif
SELECT EXISTS (SELECT FROM pg_roles WHERE rolname = :'dbuser') AS had_role, EXISTS (SELECT FROM pg_database WHERE datname = :'dbname') AS had_db \gset
\if :had_role
\else
SELECT format('CREATE ROLE %I LOGIN PASSWORD %L', :'dbuser', :'dbpass') \gexec
\endif
\if :had_db
\else
SELECT format('CREATE DATABASE %I OWNER %I', :'dbname', :'dbuser') \gexec
\endif
\echo pvc-existed :had_role :had_db
`;

/** Keeps psql's own error lines, never the script's variables (they are not echoed). */
function psqlError(text: string): string {
  return text.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('pvc-')).join('; ') || 'no output';
}

/**
 * The real port: `runuser -u postgres -- psql` on the local socket for {@link DatabaseAdmin.ensure}
 * (the password travels in psql's environment, readable only by root and that user), the `pg`
 * client over TCP for {@link DatabaseAdmin.login}.
 */
export function createPsqlDatabaseAdmin(exec: Exec, o: PsqlAdminOptions = {}): DatabaseAdmin {
  const socketDir = o.socketDir ?? '/var/run/postgresql';
  const osUser = o.osUser ?? 'postgres';
  const loginTimeoutMs = o.loginTimeoutMs ?? 5_000;
  return {
    async ensure(db, opts = {}) {
      const where = `the local PostgreSQL (socket ${socketDir}, port ${db.port})`;
      const socket = join(socketDir, `.s.PGSQL.${db.port}`);
      if (!existsSync(socket)) return { kind: 'no-local-server', socket };
      let r;
      try {
        r = await exec.run('runuser', ['-u', osUser, '--', 'psql', '-X', '-q', '-t', '-A', '-h', socketDir, '-p', String(db.port), '-d', 'postgres'], {
          input: ENSURE_SQL, env: { PVC_DB_USER: db.user, PVC_DB_NAME: db.name, PVC_DB_PASS: db.pass }, timeoutMs: 15_000, signal: opts.signal,
        });
      } catch (err) {
        throw new DatabaseAdminError(`${db.key}: could not run psql on ${where}: ${describeError(err)}`);
      }
      const lines = r.stdout.split('\n').map((l) => l.trim());
      if (r.exitCode !== 0) throw new DatabaseAdminError(`${db.key}: creating role "${db.user}" and database "${db.name}" on ${where} failed: ${psqlError(r.stderr + '\n' + r.stdout)}`);
      if (lines.includes('pvc-replica')) return { kind: 'replica' };
      const m = lines.map((l) => /^pvc-existed (t|f) (t|f)$/.exec(l)).find((x) => x !== null);
      if (!m) throw new DatabaseAdminError(`${db.key}: psql on ${where} gave no answer: ${psqlError(r.stderr + '\n' + r.stdout)}`);
      return { kind: 'ensured', createdRole: m[1] === 'f', createdDatabase: m[2] === 'f' };
    },
    async login(db) {
      const client = new pg.Client({ host: db.host, port: db.port, user: db.user, password: db.pass, database: db.name, connectionTimeoutMillis: loginTimeoutMs });
      // An error after connect (the server going away) must not become an unhandled 'error' event.
      client.on('error', () => undefined);
      try {
        await client.connect();
        await client.query('SELECT 1');
      } catch (err) {
        const code = (err as { code?: string }).code;
        const reason = code === '28P01' || code === '28000' ? 'refused-credentials' : code === '3D000' ? 'no-database' : code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EHOSTUNREACH' || /timeout/i.test(String((err as Error).message)) ? 'unreachable' : 'other';
        throw new DatabaseLoginError(`${db.key}: login as "${db.user}" to database "${db.name}" at ${db.host}:${db.port} failed: ${(err as Error).message}`, reason);
      } finally {
        await client.end().catch(() => undefined);
      }
    },
  };
}
