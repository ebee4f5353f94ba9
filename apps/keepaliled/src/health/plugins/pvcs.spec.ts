import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fakePluginContext } from '../fake-context.js';
import type { PluginServiceState } from '../types.js';
import plugin from './pvcs.js';

const ctx = (services: PluginServiceState[]) => fakePluginContext({ services: () => services });

describe('pvcs plugin', () => {
  it('every service answers: 0', async () => {
    const c = ctx([{ name: 'netd', down: false, silentForMs: 0 }, { name: 'vmd', down: false, silentForMs: 5_000 }]);
    assert.equal(await plugin.setup?.(c), undefined);
    const r = await plugin.run(c);
    assert.deepEqual(r, {
      delta: 0,
      message: 'all services answer',
      data: { netd: { down: false, silentS: 0 }, vmd: { down: false, silentS: 5 } },
    });
  });

  it('vmd down: 50, named with how long it has not answered', async () => {
    const r = await plugin.run(ctx([{ name: 'netd', down: false, silentForMs: 0 }, { name: 'vmd', down: true, silentForMs: 12_300 }]));
    assert.equal(r.delta, 50);
    assert.equal(r.message, 'vmd down (no answer for 12 s)');
    assert.deepEqual(r.data?.['vmd'], { down: true, silentS: 12 });
  });

  it('both down: still 50, both named', async () => {
    const r = await plugin.run(ctx([{ name: 'netd', down: true, silentForMs: 10_000 }, { name: 'vmd', down: true, silentForMs: 20_000 }]));
    assert.equal(r.delta, 50);
    assert.equal(r.message, 'netd down (no answer for 10 s), vmd down (no answer for 20 s)');
  });

  it('not loaded where keepaliled reports no services (a monitor without a keepalive)', async () => {
    assert.equal(await plugin.setup?.(fakePluginContext()), 'keepaliled reports no local services');
  });
});
