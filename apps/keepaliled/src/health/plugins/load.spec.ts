import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fakePluginContext } from '../fake-context.js';
import plugin, { countCpuList, parseLoadavg } from './load.js';

const ctx = (loadavg: string, online = '0-3') =>
  fakePluginContext({ files: { '/proc/loadavg': loadavg, '/sys/devices/system/cpu/online': online } });

describe('load plugin', () => {
  it('healthy: load below the CPU count', async () => {
    const r = await plugin.run(ctx('1.50 0.80 0.40 2/300 1234\n'));
    assert.equal(r.delta, 0);
    assert.equal(r.message, '1-minute load 1.50 within 4 CPUs');
    assert.deepEqual(r.data, { load1: 1.5, load5: 0.8, load15: 0.4, cpus: 4 });
  });

  it('unhealthy: load above the CPU count takes 50', async () => {
    const r = await plugin.run(ctx('4.01 3.0 2.0 9/300 1234\n'));
    assert.equal(r.delta, 50);
    assert.match(r.message, /4\.01 exceeds 4 CPUs/);
  });

  it('broken output throws a message naming the file', async () => {
    await assert.rejects(Promise.resolve(plugin.run(ctx('garbage'))), /unreadable \/proc\/loadavg/);
    await assert.rejects(Promise.resolve(plugin.run(ctx('1 1 1 1/1 1', 'x-y'))), /unreadable CPU list/);
    await assert.rejects(Promise.resolve(plugin.run(fakePluginContext())), /ENOENT/);
  });

  it('counts CPU lists with ranges and singles', () => {
    assert.equal(countCpuList('0'), 1);
    assert.equal(countCpuList('0-3,6,8-9\n'), 7);
    assert.throws(() => countCpuList('3-1'));
    assert.deepEqual(parseLoadavg('0.00 0.01 0.05 1/2 3'), [0, 0.01, 0.05]);
  });
});
