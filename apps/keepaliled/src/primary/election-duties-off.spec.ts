import { test } from 'node:test';
import assert from 'node:assert/strict';
import { paths } from '@pvc/zk';
import { DUTIES_OFF_BOUNDS } from './duties-off.js';
import { co, duties, offTimes, realErrors, rig, shutDown, transitions, warnings } from './rig.js';

// Switching the old primary's duties off when its services fail (the supervisor-death bug: netd was
// already gone when keepaliled relinquished): bounded retry, truthful logs and reasons, and which
// router state follows (duties-off.ts).

test('stepDown while netd is gone (ENOENT): 4 attempts 0.5, 1 and 2 s apart, truthful logs, secondary with a reason that says so', async () => {
  const r = await rig(['hv1', 'hv2'], { primary: 'hv1' });
  await r.clock.advance(5_000);
  const hv1 = co(r, 'hv1');
  hv1.peers.knobs.mode = { setPrimaryDuties: 'fail' };
  hv1.peers.failWith = realErrors.enoent;
  const { t0, tookMs } = await shutDown(r, hv1);
  assert.deepEqual(offTimes(hv1, t0), [0, 500, 1_500, 3_500]);
  assert.ok(tookMs <= DUTIES_OFF_BOUNDS.totalMs, `step-down took ${tookMs} ms`);
  const logged = warnings(hv1);
  assert.deepEqual(logged.map((l) => [l.level, l.msg]), [
    [40, 'could not stop the primary duties; retrying in 500 ms'],
    [40, 'could not stop the primary duties; retrying in 1000 ms'],
    [40, 'could not stop the primary duties; retrying in 2000 ms'],
    [50, 'primary duties could not be confirmed stopped (netd); secondary: a service that is not running runs no duty'],
  ]);
  assert.ok(logged.every((l) => l.service === 'netd' && l.err === 'connect ENOENT /run/pvc/sockets/netd.sock'));
  assert.equal(logged[3]?.attempts, 4);
  assert.deepEqual(transitions(hv1).slice(-2), [
    'primary -> relinquish (shutdown)',
    'relinquish -> secondary (duties not confirmed stopped: netd unreachable (connect ENOENT /run/pvc/sockets/netd.sock); it is not running)',
  ]);
  assert.ok(!hv1.events.some((e) => e.kind === 'primary-duties' && !e.on), 'no duties-off event: nothing was confirmed');
  await r.clock.advance(5_000);
  assert.deepEqual(await r.routers(), { hv1: 'secondary', hv2: 'primary' });
  assert.equal(await r.primary(), 'hv2');
  await r.stop();
});

test('handover: netd fails once (ENOENT) and answers the second attempt 0.5 s later: "duties stopped", then the new primary starts', async () => {
  const r = await rig(['hv1', 'hv2'], { primary: 'hv1' });
  await r.clock.advance(5_000);
  const hv1 = co(r, 'hv1');
  hv1.peers.failWith = realErrors.enoent;
  hv1.peers.failNext = 1;
  await r.writer.write([[paths.config.primaryNode, 'hv2']]);
  await r.clock.advance(5_000);
  const [first, second] = hv1.peers.callsOf('setPrimaryDuties').filter((c) => c.args[0] === false);
  assert.ok(first && second);
  assert.equal(second.at - first.at, 500);
  assert.deepEqual(warnings(hv1).map((l) => l.msg), ['could not stop the primary duties; retrying in 500 ms']);
  assert.deepEqual(transitions(hv1).slice(-2), ['primary -> relinquish (primary_node is hv2)', 'relinquish -> secondary (duties stopped)']);
  assert.deepEqual(r.order, ['hv1 duties on', 'hv1 duties off', 'hv2 duties on']);
  const [on] = duties(co(r, 'hv2'));
  assert.ok(on && second.done && on[1] >= second.done.at, 'hv2 on only after hv1 off was confirmed');
  assert.deepEqual(await r.routers(), { hv1: 'secondary', hv2: 'primary' });
  await r.stop();
});

for (const ignoreDeadline of [false, true]) {
  test(`stepDown while netd hangs${ignoreDeadline ? ' (a port ignoring its deadline)' : ''}: done within the 8 s bound, routerstate left relinquish; the next primary waits until hv1 is stopped`, async () => {
    const r = await rig(['hv1', 'hv2'], { primary: 'hv1' });
    await r.clock.advance(5_000);
    const hv1 = co(r, 'hv1');
    hv1.peers.knobs = { mode: { setPrimaryDuties: 'hang' }, ignoreDeadline };
    const { t0, tookMs } = await shutDown(r, hv1);
    assert.deepEqual(offTimes(hv1, t0), [0, 5_500], 'cut at 5 s, 0.5 s pause, the second cut at the bound');
    assert.ok(tookMs <= DUTIES_OFF_BOUNDS.totalMs + 50, `step-down took ${tookMs} ms`);
    assert.deepEqual(warnings(hv1).map((l) => l.msg), [
      'could not stop the primary duties; retrying in 500 ms',
      'primary duties could not be confirmed stopped (netd or cephd); staying relinquish: no other coordinator starts the duties until they are confirmed stopped (or this node is stopped, fenced or dead)',
    ]);
    assert.equal(hv1.election.routerState, 'relinquish');
    assert.deepEqual(transitions(hv1).slice(-1), ['primary -> relinquish (shutdown)']);
    await r.clock.advance(20_000);
    assert.equal(await r.primary(), 'hv2', 'primary_node handed on');
    assert.deepEqual(await r.routers(), { hv1: 'relinquish', hv2: 'takeover' });
    assert.deepEqual(co(r, 'hv2').peers.calls.length, 0, 'hv2 starts nothing while hv1 may still run the duties');
    await r.writer.write([[paths.node('hv1').daemonState, 'stop']]);
    await r.clock.advance(2_000);
    assert.equal(co(r, 'hv2').election.routerState, 'primary');
    assert.deepEqual(r.order, ['hv1 duties on', 'hv2 duties on']);
    await r.stop();
  });
}

test('handover: the old primary\'s duty switch fails without saying its service is gone: it stays relinquish and retries; the new primary waits, then takes over', async () => {
  const r = await rig(['hv1', 'hv2'], { primary: 'hv1' });
  await r.clock.advance(5_000);
  const hv1 = co(r, 'hv1');
  hv1.peers.knobs.mode = { setPrimaryDuties: 'fail' };
  await r.writer.write([[paths.config.primaryNode, 'hv2']]);
  await r.clock.advance(20_000);
  const t0 = hv1.peers.callsOf('setPrimaryDuties').find((c) => c.args[0] === false)?.at ?? NaN;
  assert.deepEqual(offTimes(hv1, t0).slice(0, 6), [0, 500, 1_500, 3_500, 8_500, 9_000], 'a round of 4, then again after the 5 s pause');
  assert.deepEqual(await r.routers(), { hv1: 'relinquish', hv2: 'takeover' });
  assert.equal(co(r, 'hv2').peers.calls.length, 0);
  const errors = warnings(hv1).filter((l) => l.level === 50);
  assert.ok(errors.length >= 2 && errors.every((l) => /\(netd or cephd\); staying relinquish/.test(l.msg)), 'one error per round');
  assert.ok(!warnings(hv1).some((l) => /election pass failed/.test(l.msg)), 'not logged twice');
  const retried = warnings(hv1).filter((l) => /primary election: failed; retrying/.test(l.msg));
  assert.deepEqual(retried.map((l) => [l.level, l.retryInMs]), [[40, 5_000]], 'the retried pass logged once, not every round');
  hv1.peers.knobs.mode = {};
  await r.clock.advance(15_000);
  assert.deepEqual(await r.routers(), { hv1: 'secondary', hv2: 'primary' });
  assert.deepEqual(r.order, ['hv1 duties on', 'hv1 duties off', 'hv2 duties on']);
  assert.deepEqual(transitions(hv1).slice(-2), ['primary -> relinquish (primary_node is hv2)', 'relinquish -> secondary (duties stopped)']);
  await r.stop();
});

test('handover: netd answers that a duty did not stop: no retry (it has left the role), secondary with its words', async () => {
  const r = await rig(['hv1', 'hv2'], { primary: 'hv1' });
  await r.clock.advance(5_000);
  const hv1 = co(r, 'hv1');
  hv1.peers.failWith = realErrors.stopFailed;
  hv1.peers.failNext = 1;
  await r.writer.write([[paths.config.primaryNode, 'hv2']]);
  await r.clock.advance(5_000);
  assert.equal(offTimes(hv1, 0).length, 1);
  assert.deepEqual(transitions(hv1).slice(-1), ['relinquish -> secondary (duties not confirmed stopped: setPrimary: netd: primary duties failed to stop: upstream-ip: connect ENOENT /x)']);
  assert.deepEqual(warnings(hv1).map((l) => l.msg), ['primary duties could not be confirmed stopped (netd); secondary: the service has left the primary role; the duty named needs an operator']);
  assert.deepEqual(await r.routers(), { hv1: 'secondary', hv2: 'primary' });
  await r.stop();
});

test('ZK session expired while primary and netd does not answer: relinquish (not secondary) until netd confirms', async () => {
  const r = await rig(['hv1', 'hv2'], { primary: 'hv1' });
  await r.clock.advance(5_000);
  const hv1 = co(r, 'hv1');
  hv1.peers.knobs.mode = { setPrimaryDuties: 'hang' };
  r.server.expireSession(hv1.zk);
  await r.clock.advance(60_000);
  assert.equal(hv1.election.routerState, 'relinquish');
  assert.notEqual((await r.routers()).hv1, 'secondary');
  assert.ok(offTimes(hv1, 0).length >= 6, 'retried round after round');
  hv1.peers.knobs.mode = {};
  await r.clock.advance(20_000);
  assert.ok(hv1.events.some((e) => e.kind === 'primary-duties' && !e.on && e.reason === 'ZK session expired'));
  assert.ok(transitions(hv1).includes('relinquish -> secondary (duties stopped)'), transitions(hv1).join('; '));
  await r.stop();
});
