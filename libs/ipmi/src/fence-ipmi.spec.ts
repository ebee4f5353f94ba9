import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AbortedError, createLogger, VirtualClock } from '@pvc/runtime';
import type { Logger } from '@pvc/runtime';
import { fenceIpmi } from './fence-ipmi.js';
import type { FenceIpmiOptions, FenceResult } from './fence-ipmi.js';
import { FakeIpmi } from './ipmi-fake.js';
import type { FakeIpmiKnobs } from './ipmi-fake.js';
import type { IpmiTarget } from './ipmi.js';

const PASS = 'fence-Pa55-word';
const TARGET: IpmiTarget = { host: 'bmc-hv2', user: 'admin', pass: PASS };
const TIMEOUT = 5000;

interface Run {
  result: FenceResult;
  fake: FakeIpmi;
  clock: VirtualClock;
  logs: string[];
}

/** Runs one fence in virtual time (steps of 50 ms), with a logger that captures every line. */
async function fence(knobs: FakeIpmiKnobs, opts: FenceIpmiOptions = {}, setup?: (f: FakeIpmi) => void): Promise<Run> {
  const clock = new VirtualClock(1_000_000);
  const fake = new FakeIpmi(clock, knobs);
  setup?.(fake);
  const logs: string[] = [];
  const logger: Logger = createLogger({ service: 'test', debug: true, destination: { write: (s: string) => void logs.push(s) } });
  let result: FenceResult | undefined;
  let failure: unknown;
  const p = fenceIpmi({ ipmi: fake, clock, logger }, TARGET, { timeoutMs: TIMEOUT, ...opts }).then(
    (r) => void (result = r),
    (e: unknown) => void (failure = e ?? new Error('rejected')),
  );
  for (let i = 0; i < 20_000 && result === undefined && failure === undefined; i++) await clock.advance(50);
  await p;
  if (failure !== undefined) throw failure;
  assert.ok(result, 'the fence never finished in virtual time');
  return { result, fake, clock, logs };
}

function assertPasswordFree(run: Run): void {
  const texts = [run.result.reason, ...run.result.warnings, ...run.result.steps.map((s) => s.detail), ...run.logs];
  for (const t of texts) assert.ok(!t.includes(PASS), `password leaked: ${t}`);
}

describe('fenceIpmi against the fake, in virtual time', () => {
  it('success: off (confirmed after the chassis really went off), then back on (confirmed)', async () => {
    const run = await fence({ latencyMs: 200, offDelayMs: 2500 });
    const { result, fake } = run;
    assert.equal(result.outcome, 'success');
    assert.equal(result.poweredBackOn, true);
    assert.deepEqual(result.warnings, []);
    assert.deepEqual(result.steps.map((s) => [s.step, s.ok]), [
      ['power-off', true], ['confirm-off', true], ['power-on', true], ['confirm-on', true],
    ]);
    // Off accepted at +0.2 s, chassis off at +2.7 s; status answers at +0.4 (on), +1.6 (on), +2.8 s (off).
    const confirmOff = result.steps[1]!;
    assert.deepEqual([confirmOff.lastStatus, confirmOff.attempts, confirmOff.durationMs], ['off', 3, 2600]);
    assert.deepEqual(result.steps.map((s) => s.startedAt - result.startedAt), [0, 200, 2800, 3000]);
    assert.equal(result.durationMs, 3200);
    assert.ok(run.logs.some((l) => l.includes('"step":"confirm-off"') && l.includes('"ok":true')));
    assert.equal(fake.power('bmc-hv2'), 'on');
    assert.deepEqual(fake.ops().filter((o) => o !== 'power status'), ['power off', 'power on']);
    assertPasswordFree(run);
  });

  it('off but never confirmed (status keeps saying on) → failed, and no power on is attempted', async () => {
    const run = await fence({ statusLiesOn: true, latencyMs: 100 }, { confirmOffMs: 8000 });
    const { result, fake } = run;
    assert.equal(result.outcome, 'failed');
    assert.match(result.reason, /^node not confirmed off: power off accepted but not off after \d+ call\(s\) in \d+ ms; last status on$/);
    assert.equal(fake.power('bmc-hv2'), 'off', 'the chassis really is off; only the BMC lies');
    assert.ok(!fake.ops().includes('power on'));
    assert.ok(result.durationMs <= 100 + 8000 + 100, `took ${result.durationMs} ms`);
    assertPasswordFree(run);
  });

  it('unreachable BMC → failed within 2 × the call timeout (bound: 3 ×)', async () => {
    const run = await fence({ unreachable: true });
    const { result, fake } = run;
    assert.equal(result.outcome, 'failed');
    assert.match(result.reason, /power off failed \(IPMI power off \(BMC bmc-hv2:623\): no answer within 5000 ms\)/);
    assert.deepEqual(result.steps.map((s) => [s.step, s.errorCode]), [
      ['power-off', 'IPMI_UNREACHABLE'], ['confirm-off', 'IPMI_UNREACHABLE'],
    ]);
    assert.deepEqual(fake.ops(), ['power off', 'power status']);
    assert.ok(result.durationMs <= 2 * TIMEOUT, `took ${result.durationMs} ms`);
    assert.ok(result.durationMs <= 3 * TIMEOUT);
    assertPasswordFree(run);
  });

  it('onConfirmedOff is called once, after the confirmed off and before the power on; never when off is not confirmed', async () => {
    let opsAtOff: string[] | undefined;
    let calls = 0;
    const probe = { onConfirmedOff: () => { calls += 1; opsAtOff = [...fakeRef.f!.ops()]; } };
    const fakeRef: { f?: FakeIpmi } = {};
    const run = await fence({ latencyMs: 200 }, probe, (f) => (fakeRef.f = f));
    assert.equal(run.result.outcome, 'success');
    assert.equal(calls, 1);
    assert.deepEqual(opsAtOff, ['power off', 'power status']);
    assert.deepEqual(run.fake.ops(), ['power off', 'power status', 'power on', 'power status']);
    let failedCalls = 0;
    const failed = await fence({ unreachable: true }, { onConfirmedOff: () => void (failedCalls += 1) });
    assert.equal(failed.result.outcome, 'failed');
    assert.equal(failedCalls, 0);
  });

  it('power on fails after a confirmed off → success, with a warning', async () => {
    const run = await fence({ powerOnFails: true, latencyMs: 50 }, { confirmOnMs: 3000 });
    const { result, fake } = run;
    assert.equal(result.outcome, 'success');
    assert.equal(result.poweredBackOn, false);
    assert.match(result.reason, /confirmed off/);
    assert.equal(result.warnings.length, 1);
    assert.match(
      result.warnings[0]!,
      /^node did not come back on: power on failed \(IPMI power on \(BMC bmc-hv2:623\): BMC refused the command \(Unspecified error\)\) and not on after \d+ call\(s\) in \d+ ms; last status off$/,
    );
    assert.equal(fake.power('bmc-hv2'), 'off');
    assert.ok(run.logs.some((l) => l.includes('"outcome":"success"')));
    assertPasswordFree(run);
  });

  it('wrong password → failed at once with IPMI_AUTH, status is not polled', async () => {
    const run = await fence({ password: 'the-right-one' });
    assert.equal(run.result.outcome, 'failed');
    assert.equal(run.result.steps.length, 1);
    assert.equal(run.result.steps[0]!.errorCode, 'IPMI_AUTH');
    assert.deepEqual(run.fake.ops(), ['power off']);
    assert.equal(run.result.durationMs, 0);
    assertPasswordFree(run);
  });

  it('power off refused for a node that is already off → confirmed off → success', async () => {
    const run = await fence({ powerOffFails: true }, {}, (f) => f.setPower('bmc-hv2', 'off'));
    assert.equal(run.result.outcome, 'success');
    assert.equal(run.result.steps[0]!.errorCode, 'IPMI_REJECTED');
    assert.equal(run.result.steps[1]!.ok, true);
  });

  it('power off refused on a running node → failed after the confirm window', async () => {
    const run = await fence({ powerOffFails: 1 }, { confirmOffMs: 4000 });
    assert.equal(run.result.outcome, 'failed');
    assert.match(run.result.reason, /power off failed \(.*refused.*\) and not off after/);
    assert.equal(run.fake.power('bmc-hv2'), 'on');
  });

  it('a slow BMC (latency above the timeout) is unreachable too', async () => {
    const run = await fence({ latencyMs: 7000 });
    assert.equal(run.result.outcome, 'failed');
    assert.equal(run.result.steps[0]!.errorCode, 'IPMI_UNREACHABLE');
    assert.ok(run.result.durationMs <= 2 * TIMEOUT);
  });

  it('an abort rejects with AbortedError', async () => {
    const ac = new AbortController();
    const clock = new VirtualClock();
    const p = fenceIpmi({ ipmi: new FakeIpmi(clock, { unreachable: true }), clock }, TARGET, { signal: ac.signal });
    await clock.advance(1000);
    ac.abort();
    await assert.rejects(p, AbortedError);
  });
});
