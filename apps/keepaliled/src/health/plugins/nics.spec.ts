import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { validateConfig } from '@pvc/config';
import { DELETE, mutate } from '@pvc/config/testing';
import { FakeExec } from '@pvc/runtime';
import { fakePluginContext } from '../fake-context.js';
import plugin from './nics.js';
import type { IpLink } from './nics.js';

const up = (ifname: string, extra: Partial<IpLink> = {}): IpLink => ({ ifname, operstate: 'UP', flags: ['UP', 'LOWER_UP'], ...extra });
const slave = (ifname: string, master: string, mii: string): IpLink =>
  up(ifname, { master, operstate: mii === 'UP' ? 'UP' : 'DOWN', linkinfo: { info_slave_kind: 'bond', info_slave_data: { mii_status: mii } } });

/** Config: upstream on a VLAN of bond0, cluster and storage on ens5, bridge ens6. */
const config = validateConfig(
  mutate(
    ['pvc.system.configuration.networking.upstream.device', 'vlan100'],
    ['pvc.system.configuration.networking.cluster.device', 'ens5'],
    ['pvc.system.configuration.networking.storage.device', 'ens5'],
    ['pvc.system.configuration.networking.bridge_device', 'ens6'],
  ),
);
const ctx = (links: unknown, exitCode = 0) =>
  fakePluginContext({ config, exec: new FakeExec().on('ip -details -json link show', { exitCode, stdout: typeof links === 'string' ? links : JSON.stringify(links) }) });

const healthy: IpLink[] = [
  up('lo', { operstate: 'UNKNOWN', flags: ['LOOPBACK', 'UP', 'LOWER_UP'] }),
  up('bond0', { linkinfo: { info_kind: 'bond' } }),
  slave('ens3', 'bond0', 'UP'),
  slave('ens4', 'bond0', 'UP'),
  up('vlan100', { link: 'bond0', linkinfo: { info_kind: 'vlan' } }),
  up('ens5'),
  up('ens6', { operstate: 'UNKNOWN', linkinfo: { info_kind: 'dummy' } }),
];

describe('nics plugin', () => {
  it('healthy: every configured device, the VLAN parent bond and its slaves are up', async () => {
    const r = await plugin.run(ctx(healthy));
    assert.equal(r.delta, 0);
    assert.equal(r.message, '4 devices up (vlan100, bond0, ens5, ens6)');
  });

  it('unhealthy: +10 per problem (slave down, device down, device missing)', async () => {
    const links = healthy
      .filter((l) => l.ifname !== 'ens6')
      .map((l) => (l.ifname === 'ens4' ? slave('ens4', 'bond0', 'DOWN') : l.ifname === 'ens5' ? { ...l, operstate: 'DOWN', flags: ['UP'] } : l));
    const r = await plugin.run(ctx(links));
    assert.equal(r.delta, 30);
    assert.equal(r.message, 'bond bond0 slave ens4 down; ens5 down; ens6 missing');
  });

  it('a bond without slaves is a problem', async () => {
    const r = await plugin.run(ctx(healthy.filter((l) => l.master !== 'bond0')));
    assert.equal(r.delta, 10);
    assert.match(r.message, /bond bond0 has no slaves/);
  });

  it('broken: non-JSON output, a non-list, a failing ip', async () => {
    await assert.rejects(Promise.resolve(plugin.run(ctx('Error: garbage'))), /not JSON/);
    await assert.rejects(Promise.resolve(plugin.run(ctx({ ifname: 'x' }))), /not a list of links/);
    await assert.rejects(Promise.resolve(plugin.run(ctx([], 1))), /ip link show failed \(exit 1\)/);
  });

  it('setup: not loaded without networking', async () => {
    const none = validateConfig(mutate(['pvc.functions.enable_networking', false], ['pvc.system.configuration.networking', DELETE]));
    assert.match(String(await plugin.setup?.(fakePluginContext({ config: none }))), /no networking configured/);
    assert.equal(await plugin.setup?.(fakePluginContext({ config })), undefined);
  });
});
