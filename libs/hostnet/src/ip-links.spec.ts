// The real adapter's parsing and error mapping, against canned `ip`/`arping` output (the same
// adapter runs for real in tests/integration/hostnet).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeExec, rejectionOf } from '@pvc/runtime';
import { createIpLinks, LinkError } from './index.js';

test('reads: links with state, carrier, master and kind; IPv4 addresses only; default routes', async () => {
  const exec = new FakeExec()
    .on('ip -json -d link show', { stdout: JSON.stringify([
      { ifname: 'ens4', mtu: 9000, flags: ['BROADCAST', 'UP', 'LOWER_UP'], master: 'brcluster', linkinfo: { info_kind: 'veth' } },
      { ifname: 'brcluster', mtu: 9000, flags: ['NO-CARRIER', 'BROADCAST', 'UP'], linkinfo: { info_kind: 'bridge' } },
      { ifname: 'ens5', mtu: 1500, flags: ['BROADCAST'] },
    ]) })
    .on('ip -json -4 address show', { stdout: JSON.stringify([{ ifname: 'brcluster', addr_info: [{ family: 'inet', local: '10.255.0.1', prefixlen: 24 }] }, { ifname: 'lo', addr_info: [] }]) })
    .on('ip -json -4 route show default', { stdout: '[{"dst":"default","gateway":"1.1.1.1","dev":"brupstream","flags":[]}]\n' });
  const port = createIpLinks(exec);
  assert.deepEqual(await port.links(), [
    { name: 'ens4', mtu: 9000, up: true, carrier: true, master: 'brcluster', kind: 'veth' },
    { name: 'brcluster', mtu: 9000, up: true, carrier: false, master: undefined, kind: 'bridge' },
    { name: 'ens5', mtu: 1500, up: false, carrier: false, master: undefined, kind: undefined },
  ]);
  assert.deepEqual(await port.addresses(), [{ device: 'brcluster', ip: '10.255.0.1', prefix: 24 }]);
  assert.deepEqual(await port.defaultRoutes(), [{ gateway: '1.1.1.1', device: 'brupstream', metric: undefined }]);
});

test('ops: the command run is the one described; refusals are classified from ip\'s message', async () => {
  const exec = new FakeExec()
    .on('ip link set ens9', { exitCode: 1, stderr: 'Cannot find device "ens9"\n' })
    .on('ip link set ens4 mtu', { exitCode: 2, stderr: 'RTNETLINK answers: Invalid argument\n' })
    .on('ip link add', { exitCode: 2, stderr: 'RTNETLINK answers: File exists\n' })
    .on('ip route replace', { exitCode: 2, stderr: 'Error: Nexthop has invalid gateway.\n' })
    .on('ip link set ens4 up', {});
  const port = createIpLinks(exec);
  await port.apply({ kind: 'set-up', device: 'ens4' });
  assert.deepEqual(exec.lines(), ['ip link set ens4 up']);
  const reason = async (p: Promise<void>) => (await rejectionOf(p, LinkError)).reason;
  assert.equal(await reason(port.apply({ kind: 'set-up', device: 'ens9' })), 'NO_DEVICE');
  assert.equal(await reason(port.apply({ kind: 'set-mtu', device: 'ens4', mtu: 9000 })), 'MTU_REFUSED');
  assert.equal(await reason(port.apply({ kind: 'add-bridge', bridge: 'brcluster' })), 'EXISTS');
  const route = await rejectionOf(port.apply({ kind: 'replace-default-route', gateway: '9.9.9.9', device: 'brupstream' }), LinkError);
  assert.equal(route.reason, 'REFUSED');
  assert.equal(route.message, 'ip route replace default via 9.9.9.9 dev brupstream: Error: Nexthop has invalid gateway.');
});

test('probeAddress: arping -D exit 0 free, 1 in use with the MAC, else a PROBE_FAILED naming the package when arping is missing', async () => {
  const exec = new FakeExec()
    .on('arping -D -c 2 -w 1 -I brcluster 10.255.0.1', { exitCode: 1, stdout: 'ARPING 10.255.0.1 from 0.0.0.0 brcluster\nUnicast reply from 10.255.0.1 [2A:B6:9A:C1:E1:7E]  0.526ms\n' })
    .on('arping -D -c 2 -w 1 -I brcluster 10.255.0.2', { exitCode: 0 })
    .on('arping -D -c 2 -w 1 -I brdown', { exitCode: 2, stderr: 'Interface "brdown" is down\n' });
  const port = createIpLinks(exec);
  assert.deepEqual(await port.probeAddress('brcluster', '10.255.0.1'), { inUse: true, by: '2a:b6:9a:c1:e1:7e' });
  assert.deepEqual(await port.probeAddress('brcluster', '10.255.0.2'), { inUse: false });
  const down = await rejectionOf(port.probeAddress('brdown', '10.255.0.1'), LinkError);
  assert.deepEqual([down.reason, down.detail], ['PROBE_FAILED', 'Interface "brdown" is down']);
  const missing = await rejectionOf(createIpLinks(new FakeExec()).probeAddress('brcluster', '10.255.0.1'), LinkError);
  assert.match(missing.message, /iputils-arping/);
});
