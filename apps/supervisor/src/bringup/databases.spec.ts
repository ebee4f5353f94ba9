import { test } from 'node:test';
import assert from 'node:assert/strict';
import { captureLogger, VirtualClock } from '@pvc/runtime';
import { FakeDatabaseAdmin } from '../host/fake-database-admin.js';
import { testConfig } from '../testing.js';
import { planDatabases, provisionDatabases } from './databases.js';

const PASSWORDS = ['pvcdnsPassw0rd', 'pvcapiPassw0rd'];

/** The captured lines as one text (for password and content checks). */
const textOf = (lines: Record<string, unknown>[]): string => JSON.stringify(lines);

test('plan: a coordinator gets the DNS and metadata databases of its config; a hypervisor none', () => {
  const plan = planDatabases(testConfig());
  assert.deepEqual(plan.map((d) => [d.key, d.name, d.user, d.host, d.port]), [
    ['coordinator.dns.database', 'pvcdns', 'pvcdns', 'localhost', 5432],
    ['coordinator.metadata.database', 'pvcapi', 'pvcapi', 'localhost', 5432],
  ]);
  assert.deepEqual(planDatabases(testConfig(['pvc.node', 'hv9'])), []);
});

test('roles and databases created when absent, then a login; a second run creates nothing', async () => {
  const clock = new VirtualClock(0);
  const admin = new FakeDatabaseAdmin();
  const log = captureLogger();
  const plan = planDatabases(testConfig());
  const r = await provisionDatabases(plan, { admin, clock, logger: log.logger, signal: new AbortController().signal });
  assert.deepEqual([...r.values()], ['ready', 'ready']);
  assert.deepEqual([...admin.databases], [['pvcdns', 'pvcdns'], ['pvcapi', 'pvcapi']]);
  assert.ok(log.lines.some((l) => l.msg === 'coordinator.dns.database: created role "pvcdns" and database "pvcdns"'), textOf(log.lines));
  const again = captureLogger();
  await provisionDatabases(plan, { admin, clock, logger: again.logger, signal: new AbortController().signal });
  assert.ok(!again.lines.some((l) => String(l.msg).includes('created')), 'nothing created the second time');
  assert.equal(again.lines.filter((l) => String(l.msg).includes('database ready')).length, 2);
  for (const p of PASSWORDS) assert.ok(!textOf(log.lines).includes(p) && !textOf(again.lines).includes(p), 'no password in the log');
});

test('a server that is down: an error naming the config key, retried with a growing pause until it is up', async () => {
  const clock = new VirtualClock(0);
  const admin = new FakeDatabaseAdmin();
  admin.down = true;
  const log = captureLogger();
  const p = provisionDatabases(planDatabases(testConfig()), { admin, clock, logger: log.logger, signal: new AbortController().signal });
  await clock.advance(10_000);
  const tries = admin.calls.filter((c) => c === 'ensure coordinator.dns.database').length;
  assert.equal(tries, 3, 'at 0, 2 and 6 s (2 s doubling)');
  assert.ok(log.lines.some((l) => l.level === 50 && String(l.msg).startsWith('coordinator.dns.database: database not usable yet')), textOf(log.lines));
  admin.down = false;
  await clock.advance(10_000);
  assert.deepEqual([...(await p).values()], ['ready', 'ready']);
});

test('a role made by hand with another password: login refused, the error names the user and pass keys, never the password; fixed → ready', async () => {
  const clock = new VirtualClock(0);
  const admin = new FakeDatabaseAdmin();
  admin.roles.set('pvcdns', 'something-else');
  const log = captureLogger();
  const ac = new AbortController();
  const p = provisionDatabases(planDatabases(testConfig()), { admin, clock, logger: log.logger, retry: 1_000, signal: ac.signal });
  await clock.advance(500);
  const err = log.lines.find((l) => l.level === 50);
  assert.ok(err, textOf(log.lines));
  assert.match(String(err.msg), /check coordinator\.dns\.database\.user and coordinator\.dns\.database\.pass/);
  assert.match(String(err.err), /password authentication failed for user "pvcdns"/);
  assert.ok(!textOf(log.lines).includes('pvcdnsPassw0rd') && !textOf(log.lines).includes('something-else'));
  admin.roles.set('pvcdns', 'pvcdnsPassw0rd');
  await clock.advance(1_500);
  const r = await p;
  assert.equal(r.get('coordinator.dns.database'), 'ready');
  assert.equal(r.get('coordinator.metadata.database'), 'ready', 'the other database was made meanwhile');
});

test('a standby server: nothing created here, ready once the login works; shutdown ends the retries', async () => {
  const clock = new VirtualClock(0);
  const admin = new FakeDatabaseAdmin();
  admin.standby = true;
  const ac = new AbortController();
  const p = provisionDatabases(planDatabases(testConfig()), { admin, clock, logger: captureLogger().logger, retry: 1_000, signal: ac.signal });
  await clock.advance(3_500);
  assert.equal(admin.databases.size, 0);
  ac.abort();
  await clock.advance(1_000);
  assert.equal((await p).size, 0, 'never ready: the primary never created them');
});

test('no server of this host on the port (the database is elsewhere): nothing created, ready once the login works there', async () => {
  const clock = new VirtualClock(0);
  const admin = new FakeDatabaseAdmin();
  admin.remote = true;
  admin.roles.set('pvcdns', 'pvcdnsPassw0rd').set('pvcapi', 'pvcapiPassw0rd');
  admin.databases.set('pvcdns', 'pvcdns').set('pvcapi', 'pvcapi');
  const log = captureLogger();
  const r = await provisionDatabases(planDatabases(testConfig()), { admin, clock, logger: log.logger, signal: new AbortController().signal });
  assert.deepEqual([...r.values()], ['ready', 'ready']);
  assert.ok(log.lines.some((l) => l.msg === 'coordinator.dns.database: no PostgreSQL of this host on port 5432: the role and database must exist on localhost'), textOf(log.lines));
});
