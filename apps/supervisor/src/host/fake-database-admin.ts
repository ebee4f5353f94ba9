import { DatabaseAdminError, DatabaseLoginError, type DatabaseAdmin, type EnsureOutcome, type WantedDatabase } from './database-admin.js';

/**
 * A PostgreSQL server in memory: roles with passwords, databases with owners. Knobs: `down` (every
 * call fails as an unreachable server), `standby` (ensure reports a replica), and `passwords`
 * (what the server really has for a role, e.g. a role made by hand with another password).
 */
export class FakeDatabaseAdmin implements DatabaseAdmin {
  readonly roles = new Map<string, string>();
  readonly databases = new Map<string, string>();
  readonly calls: string[] = [];
  down = false;
  standby = false;
  /** No server of this host: ensure creates nothing (the roles are made elsewhere, e.g. by the test). */
  remote = false;

  async ensure(db: WantedDatabase): Promise<EnsureOutcome> {
    this.calls.push(`ensure ${db.key}`);
    if (this.down) throw new DatabaseAdminError(`${db.key}: could not connect to the local PostgreSQL on port ${db.port}`);
    if (this.standby) return { kind: 'replica' };
    if (this.remote) return { kind: 'no-local-server', socket: `/var/run/postgresql/.s.PGSQL.${db.port}` };
    const createdRole = !this.roles.has(db.user);
    if (createdRole) this.roles.set(db.user, db.pass);
    const createdDatabase = !this.databases.has(db.name);
    if (createdDatabase) this.databases.set(db.name, db.user);
    return { kind: 'ensured', createdRole, createdDatabase };
  }

  async login(db: WantedDatabase): Promise<void> {
    this.calls.push(`login ${db.key}`);
    const fail = (reason: DatabaseLoginError['reason'], why: string): never => {
      throw new DatabaseLoginError(`${db.key}: login as "${db.user}" to database "${db.name}" at ${db.host}:${db.port} failed: ${why}`, reason);
    };
    if (this.down) fail('unreachable', 'connect ECONNREFUSED');
    if (this.roles.get(db.user) !== db.pass) fail('refused-credentials', `password authentication failed for user "${db.user}"`);
    if (!this.databases.has(db.name)) fail('no-database', `database "${db.name}" does not exist`);
  }
}
