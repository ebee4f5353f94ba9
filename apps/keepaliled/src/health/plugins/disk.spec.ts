import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeExec } from '@pvc/runtime';
import { fakePluginContext } from '../fake-context.js';
import { createDiskPlugin, parseLsblkDisks, smartFindings } from './disk.js';

const LSBLK = JSON.stringify({
  blockdevices: [
    { name: 'zram0', type: 'disk' },
    { name: 'sda', type: 'disk' },
    { name: 'nvme0n1', type: 'disk' },
    { name: 'vda', type: 'disk' },
    { name: 'sr0', type: 'rom' },
  ],
});
const info = (available: boolean) => ({ stdout: JSON.stringify({ smart_support: { available } }) });
const ata = (whenFailed = '') =>
  JSON.stringify({ smart_status: { passed: true }, ata_smart_attributes: { table: [{ name: 'Reallocated_Sector_Ct', when_failed: whenFailed }] } });
const nvme = (log: Record<string, number>) =>
  JSON.stringify({ smart_status: { passed: true }, nvme_smart_health_information_log: { critical_warning: 0, media_errors: 0, percentage_used: 3, ...log } });

function exec(sda: string, nvmeOut: string, sdaCode = 0): FakeExec {
  return new FakeExec()
    .on('smartctl --version', { stdout: 'smartctl 7.3\n' })
    .on('lsblk --json', { stdout: LSBLK })
    .on('smartctl --info --json /dev/sda', info(true))
    .on('smartctl --info --json /dev/nvme0n1', info(true))
    .on('smartctl --info --json /dev/vda', { exitCode: 2, stdout: '{}' })
    .on('smartctl --all --json /dev/sda', { exitCode: sdaCode, stdout: sda })
    .on('smartctl --all --json /dev/nvme0n1', { stdout: nvmeOut });
}

async function runOnce(fake: FakeExec) {
  const plugin = createDiskPlugin();
  const ctx = fakePluginContext({ exec: fake });
  assert.equal(await plugin.setup?.(ctx), undefined);
  return plugin.run(ctx);
}

describe('disk plugin', () => {
  it('healthy: SMART-capable disks only (zram, rom and virtual disks left out)', async () => {
    const fake = exec(ata(), nvme({}));
    const r = await runOnce(fake);
    assert.equal(r.delta, 0);
    assert.equal(r.message, '2 disks healthy (sda, nvme0n1)');
    assert.ok(!fake.lines().some((l) => l.includes('zram0') || l.includes('--all --json /dev/vda')));
  });

  it('unhealthy: +10 per finding', async () => {
    const r = await runOnce(exec(ata('now'), nvme({ critical_warning: 4, media_errors: 2, percentage_used: 95 })));
    assert.equal(r.delta, 40);
    assert.match(r.message, /sda: attribute Reallocated_Sector_Ct failed \(now\)/);
    assert.match(r.message, /nvme0n1: NVMe critical warning 4; nvme0n1: 2 NVMe media errors; nvme0n1: 95% of rated wear used/);
    const failed = smartFindings('sdb', 8, JSON.stringify({ smart_status: { passed: false } }));
    assert.deepEqual(failed, ['sdb: SMART overall health failed']);
  });

  it('broken: unreadable SMART answers count as findings', async () => {
    const r = await runOnce(exec('not json', nvme({}), 0));
    assert.equal(r.delta, 10);
    assert.match(r.message, /sda: SMART data unreadable/);
    assert.equal((await runOnce(exec(ata(), nvme({}), 2))).delta, 10, 'exit bit 1: device open failed');
    assert.throws(() => parseLsblkDisks('{'), /not JSON/);
    assert.throws(() => parseLsblkDisks('{}'), /no "blockdevices"/);
  });

  it('setup: not loaded without smartctl or without a SMART disk', async () => {
    assert.match(String(await createDiskPlugin().setup?.(fakePluginContext())), /smartctl not installed/);
    const virtualOnly = new FakeExec()
      .on('smartctl --version', { stdout: 'smartctl 7.3\n' })
      .on('lsblk', { stdout: JSON.stringify({ blockdevices: [{ name: 'vda', type: 'disk' }] }) })
      .on('smartctl --info', { exitCode: 1, stdout: '' });
    assert.equal(await createDiskPlugin().setup?.(fakePluginContext({ exec: virtualOnly })), 'no disk with SMART (vda)');
  });
});
