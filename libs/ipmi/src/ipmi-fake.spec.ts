import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '@pvc/runtime';
import { FakeIpmi } from './ipmi-fake.js';
import { IpmiError } from './ipmi.js';
import type { IpmiTarget } from './ipmi.js';

const T: IpmiTarget = { host: 'bmc1', port: 6230, user: 'admin', pass: 'secret-pw' };

describe('FakeIpmi', () => {
  it('models the chassis, records calls (no password) and takes latencyMs of virtual time', async () => {
    const clock = new VirtualClock();
    const fake = new FakeIpmi(clock, { latencyMs: 300 });
    const p = fake.powerOff(T);
    await clock.advance(299);
    assert.equal(fake.power('bmc1'), 'on', 'not before the latency has passed');
    await clock.advance(1);
    await p;
    assert.equal(fake.power('bmc1'), 'off');
    const s = fake.powerStatus(T);
    await clock.advance(300);
    assert.equal(await s, 'off');
    assert.deepEqual(fake.calls, [
      { op: 'power off', bmc: 'bmc1:6230', at: 300, result: 'ok' },
      { op: 'power status', bmc: 'bmc1:6230', at: 600, result: 'off' },
    ]);
    assert.ok(!JSON.stringify(fake.calls).includes('secret-pw'));
  });

  it('a numeric fail knob fails only that many calls', async () => {
    const fake = new FakeIpmi(new VirtualClock(), { powerOnFails: 1 });
    fake.setPower('bmc1', 'off');
    await assert.rejects(fake.powerOn(T), (e: unknown) => e instanceof IpmiError && e.code === 'IPMI_REJECTED');
    assert.equal(fake.power('bmc1'), 'off');
    await fake.powerOn(T);
    assert.equal(fake.power('bmc1'), 'on');
    assert.equal(fake.knobs.powerOnFails, 0);
  });

  it('unreachable waits the call timeout; a wrong password fails IPMI_AUTH; statusLiesOn lies', async () => {
    const clock = new VirtualClock();
    const fake = new FakeIpmi(clock, { unreachable: true, password: 'secret-pw' });
    let outcome = 'pending' as unknown;
    const p = fake.powerStatus(T, { timeoutMs: 2000 }).then(
      (v) => (outcome = v),
      (e: unknown) => (outcome = e),
    );
    await clock.advance(1999);
    assert.equal(outcome, 'pending');
    await clock.advance(1);
    await p;
    const settled = outcome as unknown; // assert.equal above narrowed it to 'pending'
    assert.ok(settled instanceof IpmiError && settled.code === 'IPMI_UNREACHABLE', String(settled));
    fake.knobs.unreachable = false;
    await assert.rejects(fake.powerOff({ ...T, pass: 'nope' }), (e: unknown) => e instanceof IpmiError && e.code === 'IPMI_AUTH');
    fake.knobs.statusLiesOn = true;
    await fake.powerOff(T);
    assert.equal(fake.power('bmc1'), 'off');
    assert.equal(await fake.powerStatus(T), 'on');
  });
});
