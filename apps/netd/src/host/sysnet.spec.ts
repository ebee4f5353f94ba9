// The real sysfs adapter against a directory laid out like /sys/class/net (the integration test
// reads the real /sys/class/net).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { rejectionOf, withTempDir } from '@pvc/runtime';
import { createSysfsNet, SysNetError } from './sysnet.js';

async function device(root: string, name: string, files: Record<string, string>, physical = false): Promise<void> {
  await mkdir(join(root, name, 'statistics'), { recursive: true });
  if (physical) await mkdir(join(root, name, 'device'));
  for (const [f, v] of Object.entries(files)) await writeFile(join(root, name, f), `${v}\n`);
}

const counters = { 'statistics/rx_bytes': '1000', 'statistics/tx_bytes': '2000', 'statistics/rx_packets': '10', 'statistics/tx_packets': '20' };

test('lists devices with the physical flag and reads counters, speed and operstate', async () => {
  await withTempDir('pvc-sysnet-', async (root) => {
    await device(root, 'eth0', { ...counters, speed: '1000', operstate: 'up' }, true);
    await device(root, 'lo', { ...counters, operstate: 'unknown' });
    await device(root, 'eth1', { ...counters, speed: '-1', operstate: 'down' }, true);
    const sysnet = createSysfsNet(root);
    assert.deepEqual(await sysnet.listDevices(), [
      { name: 'eth0', physical: true },
      { name: 'eth1', physical: true },
      { name: 'lo', physical: false },
    ]);
    assert.deepEqual(await sysnet.readCounters('eth0'), {
      rxBytes: 1000, txBytes: 2000, rxPackets: 10, txPackets: 20, speedMbps: 1000, operstate: 'up',
    });
    assert.equal((await sysnet.readCounters('eth1')).speedMbps, null, 'negative speed = unknown');
    assert.equal((await sysnet.readCounters('lo')).speedMbps, null, 'missing speed = unknown');
  });
});

test('a vanished device, a garbled counter and a bad name are SysNetErrors naming the device', async () => {
  await withTempDir('pvc-sysnet-', async (root) => {
    await device(root, 'eth0', { ...counters, 'statistics/tx_bytes': 'garbage' }, true);
    const sysnet = createSysfsNet(root);
    assert.match((await rejectionOf(sysnet.readCounters('eth0'), SysNetError)).message, /eth0: .*tx_bytes is not a counter: "garbage"/);
    assert.match((await rejectionOf(sysnet.readCounters('eth9'), SysNetError)).message, /eth9: cannot read/);
    assert.match((await rejectionOf(sysnet.readCounters('../../etc'), SysNetError)).message, /not a network device name/);
  });
});
