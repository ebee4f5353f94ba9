import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '@pvc/config';
import { mutate } from '@pvc/config/testing';
import { PrimaryRole } from '@pvc/rpc';
import { createLogger } from '@pvc/runtime';
import { dump } from 'js-yaml';
import { netdPrimaryDuties } from '../duties.js';
import { FakeAddresses } from './fake-addresses.js';
import { floatingAddresses, removeLeftovers } from './floating.js';

const SYSNET = 'pvc.system.configuration.networking';
const configOf = (...edits: [string, unknown][]) => parseConfig(dump(mutate(...edits)), 'test.yaml');
/** Cluster on ens4, storage on ens5, upstream on ens6 (each its own bridge). */
const SEPARATE: [string, unknown][] = [[`${SYSNET}.storage.device`, 'ens5'], [`${SYSNET}.upstream.device`, 'ens6'], [`${SYSNET}.upstream.address`, '1.1.1.11/24']];

function rig() {
  const lines: { level: number; msg: string; [k: string]: unknown }[] = [];
  const logger = createLogger({ service: 'test', destination: { write: (s: string) => void lines.push(JSON.parse(s) as (typeof lines)[number]) } });
  const addresses = new FakeAddresses(['brcluster', 'brstorage', 'brupstream']);
  return { lines, logger, addresses };
}

test('floating addresses: upstream, cluster, storage on their own bridges; all on brcluster when the devices are shared; none without networking', () => {
  assert.deepEqual(floatingAddresses(configOf(...SEPARATE)), [
    { network: 'upstream', cidr: '1.1.1.10/24', bridge: 'brupstream' },
    { network: 'cluster', cidr: '10.255.0.254/24', bridge: 'brcluster' },
    { network: 'storage', cidr: '10.254.0.254/24', bridge: 'brstorage' },
  ]);
  // The sample shares ens4 between all three networks.
  assert.deepEqual(floatingAddresses(configOf()).map((f) => `${f.network} ${f.bridge}`), ['upstream brcluster', 'cluster brcluster', 'storage brcluster']);
  assert.deepEqual(floatingAddresses(configOf(['pvc.functions.enable_networking', false])), []);
});

test('takeover adds them in the original\'s order (upstream first) with a gratuitous ARP each; relinquish removes them in reverse', async () => {
  const { logger, addresses } = rig();
  const role = new PrimaryRole({ service: 'netd', logger, duties: netdPrimaryDuties(floatingAddresses(configOf(...SEPARATE)), { addresses, logger }) });
  assert.equal(await role.set(true, 'takeover'), true);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(addresses.ops.filter((o) => o.op === 'add').map((o) => `${o.what} ${o.device}`), ['1.1.1.10/24 brupstream', '10.255.0.254/24 brcluster', '10.254.0.254/24 brstorage']);
  assert.deepEqual(addresses.ops.filter((o) => o.op === 'announce').map((o) => o.what).sort(), ['1.1.1.10', '10.254.0.254', '10.255.0.254']);
  assert.deepEqual(addresses.devices.get('brupstream'), ['1.1.1.10/24']);
  addresses.ops.length = 0;
  assert.equal(await role.set(false, 'relinquish'), false);
  assert.deepEqual(addresses.ops.map((o) => `${o.op} ${o.what}`), ['remove 10.254.0.254/24', 'remove 10.255.0.254/24', 'remove 1.1.1.10/24']);
  for (const d of ['brcluster', 'brstorage', 'brupstream']) assert.deepEqual(addresses.devices.get(d), []);
});

test('a gratuitous ARP that cannot be sent is logged, the address stays; an address that cannot be added fails the takeover and undoes the others', async () => {
  const { logger, addresses, lines } = rig();
  const role = new PrimaryRole({ service: 'netd', logger, duties: netdPrimaryDuties(floatingAddresses(configOf(...SEPARATE)), { addresses, logger }) });
  addresses.knobs.failAnnounce = true;
  assert.equal(await role.set(true, 'takeover'), true);
  await new Promise((r) => setImmediate(r));
  assert.ok(lines.some((l) => l.msg === 'gratuitous ARP for the floating address not sent' && l.address === '1.1.1.10/24'));
  assert.deepEqual(addresses.devices.get('brupstream'), ['1.1.1.10/24']);
  await role.set(false, 'relinquish');
  addresses.knobs = { refuseAdd: 'brstorage' };
  await assert.rejects(role.set(true, 'takeover'), /floating-ip-storage failed to start: .*Operation not permitted/);
  for (const d of ['brcluster', 'brstorage', 'brupstream']) assert.deepEqual(addresses.devices.get(d), [], `${d} left empty`);
});

test('leftovers: a floating address found at start is removed (netd starts secondary); other addresses and missing bridges are left alone', async () => {
  const { logger, addresses, lines } = rig();
  addresses.devices.get('brcluster')!.push('10.255.0.1/24', '10.255.0.254/24');
  addresses.devices.delete('brstorage');
  const failed = await removeLeftovers(floatingAddresses(configOf(...SEPARATE)), { addresses, logger });
  assert.deepEqual(failed, []);
  assert.deepEqual(addresses.devices.get('brcluster'), ['10.255.0.1/24']);
  assert.equal(lines.filter((l) => /left from before/.test(l.msg)).length, 1);
  addresses.devices.get('brupstream')!.push('1.1.1.10/24');
  addresses.knobs.refuseRemove = 'brupstream';
  const again = await removeLeftovers(floatingAddresses(configOf(...SEPARATE)), { addresses, logger });
  assert.equal(again.length, 1);
  assert.match(again[0]!, /upstream 1\.1\.1\.10\/24 on brupstream: .*Operation not permitted/);
});
