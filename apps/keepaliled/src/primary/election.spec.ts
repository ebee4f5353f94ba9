import { test } from 'node:test';
import assert from 'node:assert/strict';
import { paths } from '@pvc/zk';
import { settle } from '../testing/fakes.js';
import { co, duties, realErrors, rig, transitions, warnings } from './rig.js';
import { primaryLeaseMs } from './election.js';

for (const n of [2, 3]) {
  test(`${n} coordinators, primary none: exactly one wins; only it runs the duties`, async () => {
    const names = ['hv1', 'hv2', 'hv3'].slice(0, n);
    const r = await rig(names);
    await r.clock.advance(10_000);
    const p = await r.primary();
    assert.ok(p !== undefined && names.includes(p), `primary is ${p}`);
    assert.deepEqual(r.order, [`${p} duties on`]);
    const routers = await r.routers();
    for (const name of names) {
      assert.equal(routers[name], name === p ? 'primary' : 'secondary', name);
      assert.equal(co(r, name).election.routerState, name === p ? 'primary' : 'secondary');
      assert.equal(co(r, name).peers.dutiesOn, name === p);
    }
    const claims = Object.values(r.c).flatMap((x) => x.events.filter((e) => e.kind === 'primary-claimed'));
    assert.equal(claims.length, 1);
    assert.equal(await r.writer.read(paths.config.migrationTargetSelector), 'mem', 'primary-only keys written');
    await r.stop();
  });
}

test('a coordinator that may not contend (not run) never claims the role', async () => {
  const r = await rig(['hv1', 'hv2'], { start: false });
  co(r, 'hv1').contend = false;
  for (const x of Object.values(r.c)) x.running = x.election.run(x.ac.signal);
  await r.clock.advance(10_000);
  assert.equal(await r.primary(), 'hv2');
  await r.stop();
});

test('handover by writing primary_node=other: the new primary switches its duties on only after the old one switched them off', async () => {
  const r = await rig(['hv1', 'hv2', 'hv3'], { primary: 'hv1', routers: {} });
  await r.clock.advance(5_000);
  assert.deepEqual(r.order, ['hv1 duties on']);
  co(r, 'hv1').peers.knobs.latencyMs = { setPrimaryDuties: 3_000 }; // stopping dnsmasq, IPs… takes a while
  await r.writer.write([[paths.config.primaryNode, 'hv2']]);
  await r.clock.advance(2_000);
  assert.equal(co(r, 'hv2').election.routerState, 'takeover');
  assert.equal(co(r, 'hv1').election.routerState, 'relinquish');
  assert.equal(co(r, 'hv2').peers.callsOf('setPrimaryDuties').length, 0, 'not while hv1 is still relinquishing');
  await r.clock.advance(5_000);
  assert.deepEqual(r.order, ['hv1 duties on', 'hv1 duties off', 'hv2 duties on']);
  const [off] = duties(co(r, 'hv1')).slice(-1);
  const [on] = duties(co(r, 'hv2'));
  assert.ok(off && on && off[2] !== undefined && on[1] >= off[2], `hv2 on at ${on?.[1]}, hv1 off done at ${off?.[2]}`);
  assert.deepEqual(await r.routers(), { hv1: 'secondary', hv2: 'primary', hv3: 'secondary' });
  const hv2Router = co(r, 'hv2').events.filter((e) => e.kind === 'router-state').map((e) => e.kind === 'router-state' && e.to);
  assert.deepEqual(hv2Router, ['takeover', 'primary']);
  await r.stop();
});

for (const n of [2, 3]) {
  test(`${n} coordinators, primary_node set to none: another coordinator takes over; the old primary does not win it back`, async () => {
    const names = ['hv1', 'hv2', 'hv3'].slice(0, n);
    const r = await rig(names, { primary: 'hv1' });
    await r.clock.advance(5_000);
    assert.equal(co(r, 'hv1').election.routerState, 'primary');
    await r.writer.write([[paths.config.primaryNode, 'none']]);
    await r.clock.advance(10_000);
    const p = await r.primary();
    assert.ok(p !== undefined && p !== 'hv1' && p !== 'none', `primary is ${p}`);
    assert.deepEqual(r.order, ['hv1 duties on', 'hv1 duties off', `${p} duties on`]);
    assert.equal(co(r, 'hv1').events.filter((e) => e.kind === 'primary-claimed').length, 0);
    await r.clock.advance(30_000);
    assert.equal(await r.primary(), p, 'stable');
    await r.stop();
  });
}

test('stepDown on shutdown: duties off, secondary, primary_node none, and another coordinator takes over', async () => {
  const r = await rig(['hv1', 'hv2'], { primary: 'hv1' });
  await r.clock.advance(5_000);
  const hv1 = co(r, 'hv1');
  hv1.ac.abort();
  await settle(r.clock, hv1.running);
  await settle(r.clock, hv1.election.stepDown());
  assert.equal(hv1.election.routerState, 'secondary');
  assert.equal(hv1.peers.dutiesOn, false);
  await r.clock.advance(5_000);
  assert.equal(await r.primary(), 'hv2');
  assert.deepEqual(r.order, ['hv1 duties on', 'hv1 duties off', 'hv2 duties on']);
  assert.deepEqual(await r.routers(), { hv1: 'secondary', hv2: 'primary' });
  await r.stop();
});

test('stepDown of a secondary does nothing', async () => {
  const r = await rig(['hv1', 'hv2'], { primary: 'hv1' });
  await r.clock.advance(5_000);
  await settle(r.clock, co(r, 'hv2').election.stepDown());
  assert.equal(await r.primary(), 'hv1');
  assert.equal(co(r, 'hv2').peers.calls.length, 0);
  await r.stop();
});

test('ZK session expired while primary: the duties go off at once', async () => {
  const r = await rig(['hv1', 'hv2'], { primary: 'hv1' });
  await r.clock.advance(5_000);
  const hv1 = co(r, 'hv1');
  const expiredAt = r.clock.now();
  r.server.expireSession(hv1.zk);
  await r.clock.advance(0);
  const off = duties(hv1).find(([on]) => on === false);
  assert.ok(off, 'duties switched off');
  assert.equal(off[1], expiredAt);
  assert.ok(hv1.events.some((e) => e.kind === 'primary-duties' && !e.on && e.reason === 'ZK session expired'));
  await r.stop();
});

test('primary lease: a primary whose keepalive is older than the lease drops its duties unasked (before the others\' grace), and takes them again once it writes keepalives and ZK still names it', async () => {
  const leaseMs = primaryLeaseMs(10_000, 1_000);
  assert.equal(leaseMs, 10_000, 'session 10 s + interval 1 s - margin 1 s');
  // The others' takeover waits for session + interval = 11 s of silence: the lease ends before.
  assert.ok(leaseMs + 1_000 <= 10_000 + 1_000);
  assert.ok(primaryLeaseMs(10_000, 5_000) > 5_000, 'longer than an interval at the default interval too');
  const lastOk: Record<string, number> = {};
  let now = (): number => 0;
  const r = await rig(['hv1', 'hv2'], { primary: 'hv1', lease: { ms: leaseMs, silentForMs: (n) => now() - (lastOk[n] ?? now()) } });
  now = () => r.clock.now();
  await r.clock.advance(3_000);
  const hv1 = co(r, 'hv1');
  assert.deepEqual(duties(hv1).map(([on]) => on), [true]);
  // hv1's keepalives stop being acknowledged (cut off; its session is not expired yet).
  const cutAt = r.clock.now();
  lastOk.hv1 = cutAt;
  await r.clock.advance(leaseMs - 500);
  assert.deepEqual(duties(hv1).map(([on]) => on), [true], 'kept while the lease runs');
  await r.clock.advance(1_000);
  const off = duties(hv1).find(([on]) => on === false);
  assert.ok(off, 'duties switched off');
  assert.ok(off[1] - cutAt >= leaseMs && off[1] - cutAt <= leaseMs + 250, `off ${off[1] - cutAt} ms after the last keepalive`);
  assert.ok(warnings(hv1).some((l) => /stopping the primary duties unasked/.test(l.msg) && /lease/.test(String(l.why))));
  assert.equal(hv1.election.routerState, 'secondary');
  // Keepalives are acknowledged again; primary_node still names hv1: it takes over again.
  delete lastOk.hv1;
  await r.clock.advance(2_000);
  assert.deepEqual(duties(hv1).map(([on]) => on), [true, false, true]);
  assert.equal(hv1.election.routerState, 'primary');
  assert.equal((await r.routers()).hv1, 'primary');
  await r.stop();
});

test('while primary the duties are asked for again every interval (a restarted netd gets them back); a handover never sees an `on` after its `off`', async () => {
  const r = await rig(['hv1', 'hv2'], { primary: 'hv1', reassertEveryMs: 1_000 });
  await r.clock.advance(3_500);
  const hv1 = co(r, 'hv1');
  const ons = duties(hv1).filter(([on]) => on === true).length;
  assert.ok(ons >= 3, `takeover + re-assertions: ${ons}`);
  assert.ok(hv1.peers.callsOf('setPrimaryDuties').some((c) => c.args[1] === 'primary (re-asserted)'));
  // Handover to hv2 while a slow re-assertion is in flight (started at +4 s, answered at +4.9 s)
  // and the switch-off is fast: hv1's `off` must still be the last to land, hv2 on after it.
  hv1.peers.knobs.latencyMs = { setPrimaryDuties: 900 };
  await r.clock.advance(600);
  assert.ok(hv1.peers.callsOf('setPrimaryDuties').some((c) => c.done === undefined), 'a re-assertion is in flight');
  hv1.peers.knobs.latencyMs = { setPrimaryDuties: 100 };
  await r.writer.write([[paths.config.primaryNode, 'hv2']]);
  await r.clock.advance(5_000);
  const calls = duties(hv1);
  assert.equal(calls.at(-1)?.[0], false, `hv1's last duty call is off: ${JSON.stringify(calls)}`);
  const offDone = calls.at(-1)?.[2] ?? Infinity;
  for (const [on, , done] of calls.slice(0, -1)) assert.ok(on === true && (done ?? Infinity) <= offDone);
  assert.equal(hv1.peers.dutiesOn, false);
  const hv2On = duties(co(r, 'hv2')).find(([on]) => on === true);
  assert.ok(hv2On && hv2On[1] >= offDone, 'hv2 on only after hv1 off');
  assert.deepEqual(r.order.filter((o) => o.includes('off') || o.startsWith('hv2')).slice(0, 2), ['hv1 duties off', 'hv2 duties on']);
  await r.clock.advance(3_000);
  assert.equal(duties(hv1).at(-1)?.[0], false, 'no re-assertion once secondary');
  await r.stop();
});

test('primary_node naming a fenced coordinator counts as vacant: a live coordinator takes over', async () => {
  const r = await rig(['hv1', 'hv2', 'hv3'], { primary: 'hv1', start: false });
  await r.writer.write([[paths.node('hv1').daemonState, 'fenced']]);
  for (const name of ['hv2', 'hv3']) {
    const x = co(r, name);
    x.running = x.election.run(x.ac.signal);
  }
  await r.clock.advance(10_000);
  const p = await r.primary();
  assert.ok(p === 'hv2' || p === 'hv3', `primary is ${p}`);
  assert.deepEqual(r.order, [`${p} duties on`]);
  await r.stop();
});

test('the new primary\'s duties fail to start once: the takeover is retried, not left hanging in takeover', async () => {
  const r = await rig(['hv1', 'hv2'], { primary: 'hv1', start: false });
  const hv1 = co(r, 'hv1');
  hv1.peers.knobs.mode = { setPrimaryDuties: 'fail' };
  hv1.running = hv1.election.run(hv1.ac.signal);
  await r.clock.advance(2_000);
  hv1.peers.knobs.mode = {};
  await r.clock.advance(30_000);
  assert.equal(hv1.election.routerState, 'primary');
  assert.equal(hv1.peers.dutiesOn, true);
  await r.stop();
});

test('a failing pass is retried after growing delays (0.5, 1, 2, 2 s), logged once per reason and once when it works again', async () => {
  const r = await rig(['hv1', 'hv2'], { primary: 'hv1', start: false });
  const hv1 = co(r, 'hv1');
  hv1.peers.knobs.mode = { setPrimaryDuties: 'fail' };
  hv1.peers.failWith = realErrors.enoent;
  hv1.running = hv1.election.run(hv1.ac.signal);
  await r.clock.advance(4_000);
  const t0 = duties(hv1)[0]?.[1] ?? NaN;
  assert.deepEqual(duties(hv1).map(([, at]) => at - t0), [0, 500, 1_500, 3_500], 'the duties asked for again after 0.5, 1, 2 s');
  assert.equal(hv1.election.passState, 'backoff');
  // Another reason (netd now times out): logged once more; the delay stays at its 2 s cap.
  hv1.peers.failWith = realErrors.timeout;
  await r.clock.advance(4_000);
  assert.deepEqual(duties(hv1).map(([, at]) => at - t0), [0, 500, 1_500, 3_500, 5_500, 7_500]);
  hv1.peers.knobs.mode = {};
  await r.clock.advance(2_000);
  assert.equal(hv1.election.routerState, 'primary');
  assert.equal(duties(hv1).at(-1)?.[1], t0 + 9_500);
  const failed = hv1.log.filter((l) => /primary election: failed; retrying/.test(l.msg));
  assert.deepEqual(failed.map((l) => [l.level, l.failures, l.retryInMs]), [[40, 1, 500], [40, 5, 2_000]]);
  assert.match(String(failed[0]?.err), /ENOENT/);
  assert.match(String(failed[1]?.err), /Deadline exceeded/);
  assert.deepEqual(hv1.log.filter((l) => /primary election: works again/.test(l.msg)).map((l) => l.failures), [6]);
  assert.equal(hv1.log.filter((l) => /election pass failed/.test(l.msg)).length, 0);
  // Re-entering the takeover after each failure wrote `takeover` once.
  assert.deepEqual(transitions(hv1), ['secondary -> takeover (primary_node names us)', 'takeover -> primary (takeover complete)']);
  await r.stop();
});

test('a takeover waiting for the old primary writes `takeover` once and looks again every 0.5 s: a dead primary\'s grace ends the wait with no event', async () => {
  const names = ['hv1', 'hv2'];
  const seen: Record<string, number> = {};
  const r = await rig(names, { primary: 'hv2', routers: { hv1: 'primary' }, start: false, deadPrimaryGraceMs: 3_000, silentForMs: (n) => r.clock.now() - (seen[n] ?? 0) });
  seen.hv1 = r.clock.now();
  await r.writer.write([[paths.node('hv1').daemonState, 'dead']]);
  const hv2 = co(r, 'hv2');
  hv2.running = hv2.election.run(hv2.ac.signal);
  await r.clock.advance(2_500);
  assert.equal(hv2.election.routerState, 'takeover');
  assert.equal(hv2.peers.calls.length, 0, 'hv1 may still hold its duties');
  assert.equal(hv2.log.filter((l) => /takeover waits for the old primary/.test(l.msg)).length, 1, 'the wait logged once');
  await r.clock.advance(1_000);
  const [on] = duties(hv2);
  assert.ok(on, 'duties on once hv1 has been silent for the grace');
  assert.ok(on[1] - seen.hv1 >= 3_000 && on[1] - seen.hv1 <= 3_500, `on ${on[1] - seen.hv1} ms after hv1 was last seen`);
  assert.deepEqual(transitions(hv2), ['secondary -> takeover (primary_node names us)', 'takeover -> primary (takeover complete)']);
  assert.equal(hv2.events.filter((e) => e.kind === 'router-state').length, 2);
  await r.stop();
});
