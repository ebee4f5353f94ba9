import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { captureLogger, VirtualClock } from '@pvc/runtime';
import { FakeUserData } from './fake-user-data.js';
import { GuardedUserData } from './guarded-user-data.js';
import { UserDataError } from './user-data.js';

function rig() {
  const clock = new VirtualClock(0);
  const { logger, lines } = captureLogger();
  const db = new FakeUserData();
  db.profiles.set('cloud', 'ud');
  const guard = new GuardedUserData({ source: db, clock, logger, retry: { firstMs: 1_000, maxMs: 4_000 } });
  const errors = () => lines.filter((l) => l.level === 50);
  return { clock, lines, db, guard, errors };
}

describe('GuardedUserData', () => {
  it('start probes at once: a database refusing the credentials is one error line naming coordinator.metadata.database, then retried with a doubling pause until it answers', async () => {
    const { clock, db, guard, errors, lines } = rig();
    db.down = 'refused-credentials';
    guard.start();
    await clock.advance(0);
    assert.deepEqual(guard.current.kind, 'down');
    assert.equal(errors().length, 1);
    assert.equal(errors()[0]?.key, 'coordinator.metadata.database');
    assert.match(String(errors()[0]?.msg), /^coordinator\.metadata\.database: .*refused-credentials/);
    await clock.advance(1_000);
    await clock.advance(2_000);
    await clock.advance(4_000);
    await clock.advance(4_000);
    assert.deepEqual(db.calls, ['check', 'check', 'check', 'check', 'check'], 'probes at 0, 1, 3, 7, 11 s (doubling, capped at 4 s)');
    assert.equal(errors().length, 1, 'one error line per outage');
    db.down = undefined;
    await clock.advance(4_000);
    assert.equal(guard.current.kind, 'up');
    assert.ok(lines.some((l) => /usable again/.test(String(l.msg))));
    assert.equal(await guard.forProfile('cloud'), 'ud');
    guard.stop();
  });

  it('while down, requests fail at once without asking the database; a request failure marks it down and starts probing; stop ends the probing', async () => {
    const { clock, db, guard, errors } = rig();
    guard.start();
    await clock.advance(0);
    assert.equal(guard.current.kind, 'up');
    db.down = 'unreachable';
    await assert.rejects(guard.forProfile('cloud'), (e: unknown) => e instanceof UserDataError && e.reason === 'unreachable');
    assert.equal(errors().length, 1);
    db.calls.length = 0;
    await assert.rejects(guard.forProfile('cloud'), UserDataError);
    assert.deepEqual(db.calls, [], 'the request did not reach the database');
    await clock.advance(1_000);
    assert.deepEqual(db.calls, ['check'], 'the probe after its pause');
    guard.stop();
    await clock.advance(60_000);
    assert.deepEqual(db.calls, ['check'], 'no probe after stop');
    db.down = undefined;
    guard.start();
    await clock.advance(0);
    assert.equal(guard.current.kind, 'up', 'a restart probes again');
  });
});
