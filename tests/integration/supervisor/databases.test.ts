/**
 * The supervisor's coordinator databases against a real PostgreSQL: the role and database of each
 * config key created when absent (psql as the server's superuser on the local socket, the password
 * only in psql's environment), a login as the configured user; bad input named by its config key.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createExec, realClock, type Logger } from '@pvc/runtime';
import { captureLogger } from '@pvc/runtime';
import { createPsqlDatabaseAdmin, DatabaseAdminError, DatabaseLoginError, type WantedDatabase } from '../../../apps/supervisor/src/host/database-admin.js';
import { provisionDatabases } from '../../../apps/supervisor/src/bringup/databases.js';
import { PgTestServer } from '../../support/postgres-server.js';

describe('coordinator databases on a real PostgreSQL [root only]', () => {
  let pg: PgTestServer;
  const logs: Record<string, unknown>[][] = [];
  const exec = createExec();

  before(async () => {
    assert.equal(process.getuid?.(), 0, 'needs root (runs PostgreSQL as postgres)');
    pg = new PgTestServer();
    await pg.start();
  });
  after(() => pg?.close());

  const want = (key: WantedDatabase['key'], name: string, user: string, pass: string): WantedDatabase => ({ key, host: '127.0.0.1', port: pg.port, name, user, pass });
  const logger = (): Logger => {
    const c = captureLogger();
    logs.push(c.lines);
    return c.logger;
  };

  it('provisioning creates both roles and databases, logs in as each; run again it creates nothing', async () => {
    const admin = createPsqlDatabaseAdmin(exec, { socketDir: pg.socketDir });
    const plan = [want('coordinator.dns.database', 'pvcdns', 'pvcdns', 'dnsPassw0rd'), want('coordinator.metadata.database', 'pvcapi', 'pvcapi', 'apiPassw0rd')];
    const r = await provisionDatabases(plan, { admin, clock: realClock, logger: logger(), signal: AbortSignal.timeout(60_000) });
    assert.deepEqual([...r.values()], ['ready', 'ready']);
    assert.equal(pg.sql("SELECT string_agg(datname || ':' || pg_get_userbyid(datdba), ',' ORDER BY datname) FROM pg_database WHERE datname LIKE 'pvc%'"), 'pvcapi:pvcapi,pvcdns:pvcdns');
    assert.deepEqual(await admin.ensure(plan[0]!), { kind: 'ensured', createdRole: false, createdDatabase: false });
  });

  it('names and a password with quotes, a backslash and a space work (nothing is pasted into SQL or a command line)', async () => {
    const admin = createPsqlDatabaseAdmin(exec, { socketDir: pg.socketDir });
    const db = want('coordinator.metadata.database', 'odd "db" name', "o'user", `p'a"ss\\w rd ö`);
    assert.deepEqual(await admin.ensure(db), { kind: 'ensured', createdRole: true, createdDatabase: true });
    await admin.login(db);
  });

  it('a role that exists with another password: the login is refused (refused-credentials), the message names the key, not the password', async () => {
    pg.sql("CREATE ROLE handmade LOGIN PASSWORD 'theirs'");
    const admin = createPsqlDatabaseAdmin(exec, { socketDir: pg.socketDir });
    const db = want('coordinator.dns.database', 'handmade', 'handmade', 'ours-Secret1');
    assert.deepEqual(await admin.ensure(db), { kind: 'ensured', createdRole: false, createdDatabase: true });
    const err = await admin.login(db).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof DatabaseLoginError, String(err));
    assert.equal(err.reason, 'refused-credentials');
    assert.match(err.message, /^coordinator\.dns\.database: login as "handmade"/);
    assert.ok(!err.message.includes('ours-Secret1'));
  });

  it('the server down: its socket is gone (ensure: no-local-server), the login is unreachable; provisioning retries, naming the key, until it is back', async () => {
    const admin = createPsqlDatabaseAdmin(exec, { socketDir: pg.socketDir, loginTimeoutMs: 2_000 });
    const db = want('coordinator.dns.database', 'later', 'later', 'laterPassw0rd');
    pg.stop();
    assert.equal((await admin.ensure(db)).kind, 'no-local-server');
    const login = await admin.login(db).then(() => undefined, (e: unknown) => e);
    assert.ok(login instanceof DatabaseLoginError && login.reason === 'unreachable', String(login));
    assert.match(login.message, /^coordinator\.dns\.database: login as "later" to database "later" at 127\.0\.0\.1:\d+ failed/);
    const lines = captureLogger();
    const p = provisionDatabases([db], { admin, clock: realClock, logger: lines.logger, retry: 300, signal: AbortSignal.timeout(60_000) });
    // Waits for the first failure to be logged, then brings the server back.
    for (let i = 0; i < 100 && !lines.lines.some((l) => l.level === 50); i++) await realClock.sleep(100);
    assert.ok(lines.lines.some((l) => l.level === 50 && String(l.msg).startsWith('coordinator.dns.database: database not usable yet')), JSON.stringify(lines.lines));
    await pg.start();
    assert.deepEqual([...(await p).values()], ['ready']);
    assert.equal(pg.sql("SELECT count(*) FROM pg_database WHERE datname = 'later'"), '1', 'created once the server was back');
    assert.ok(!JSON.stringify(lines.lines).includes('laterPassw0rd'), 'no password in the log');
  });

  it('the server refuses the administrator (psql as an OS user it does not know): an error naming the key and the server', async () => {
    const admin = createPsqlDatabaseAdmin(exec, { socketDir: pg.socketDir, osUser: 'nobody' });
    const err = await admin.ensure(want('coordinator.metadata.database', 'refused', 'refused', 'x')).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof DatabaseAdminError, String(err));
    assert.match(err.message, /^coordinator\.metadata\.database: creating role "refused" and database "refused" on the local PostgreSQL \(socket .*, port \d+\) failed: .*nobody/);
  });

  it('no server of this host on the port: ensure reports no-local-server (nothing to create here)', async () => {
    const admin = createPsqlDatabaseAdmin(exec, { socketDir: pg.socketDir });
    const db = { ...want('coordinator.dns.database', 'elsewhere', 'elsewhere', 'x'), port: pg.port + 1 };
    assert.deepEqual(await admin.ensure(db), { kind: 'no-local-server', socket: `${pg.socketDir}/.s.PGSQL.${pg.port + 1}` });
  });

  it('no password in any log line of these runs', () => {
    const text = JSON.stringify(logs);
    for (const p of ['dnsPassw0rd', 'apiPassw0rd']) assert.ok(!text.includes(p), p);
  });
});
