import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fakePluginContext } from '../fake-context.js';
import type { PluginBmc } from '../types.js';
import plugin from './ipmi.js';

function bmc(answers: (('on' | 'off') | Error)[]): PluginBmc & { calls: number } {
  const b = {
    name: '10.0.0.11:623',
    calls: 0,
    powerStatus: () => {
      const a = answers[Math.min(b.calls++, answers.length - 1)];
      return a instanceof Error ? Promise.reject(a) : Promise.resolve(a ?? 'on');
    },
  };
  return b;
}

describe('ipmi plugin', () => {
  it('healthy: the BMC answers', async () => {
    const b = bmc(['on']);
    const r = await plugin.run(fakePluginContext({ bmc: b }));
    assert.equal(r.delta, 0);
    assert.equal(r.message, 'BMC 10.0.0.11:623 answers; chassis power on');
    assert.equal(b.calls, 1);
  });

  it('a failed try is retried; 3 failures take 10 with the last reason', async () => {
    const flaky = bmc([new Error('IPMI power status (BMC 10.0.0.11:623): no answer within 4000 ms'), 'on']);
    assert.equal((await plugin.run(fakePluginContext({ bmc: flaky }))).delta, 0);
    assert.equal(flaky.calls, 2);
    const dead = bmc([new Error('IPMI power status (BMC 10.0.0.11:623): no answer within 4000 ms')]);
    const r = await plugin.run(fakePluginContext({ bmc: dead }));
    assert.equal(r.delta, 10);
    assert.equal(dead.calls, 3);
    assert.match(r.message, /unreachable after 3 tries: .*no answer within 4000 ms/);
  });

  it('broken: auth refused is reported; the plugin only ever sees a redacted password', async () => {
    const ctx = fakePluginContext({ bmc: bmc([new Error('IPMI power status (BMC 10.0.0.11:623): bad user or password')]) });
    const r = await plugin.run(ctx);
    assert.equal(r.delta, 10);
    assert.match(r.message, /bad user or password/);
    assert.equal(ctx.config.system.fencing.ipmi.pass, '[redacted]');
  });

  it('setup: not loaded without a BMC', async () => {
    assert.match(String(await plugin.setup?.(fakePluginContext())), /no IPMI host configured/);
    assert.equal(await plugin.setup?.(fakePluginContext({ bmc: bmc(['on']) })), undefined);
  });
});
