import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDomainXml } from '../../apps/cli/src/ops/domain-xml.js';
import { consoleDisk, guestDomainXml, resolveDiskModules } from '../support/guest/index.js';
import { fakeModulesDir } from '../support/guest/modules-fixture.js';

// Pure parts of the test guest's RBD disk: the domain XML, the disk modules, the console lines.
describe('test guest with an RBD disk (pure)', () => {
  const base = { name: 'vm1', kernel: '/k', initrd: '/i', consoleLog: '/c/vm1.log' };

  it('writes <disk type=network> on rbd with cache=none, virtio targets vda, vdb…, no <auth>', () => {
    const xml = guestDomainXml({ ...base, disks: [{ pool: 'vms', image: 'vm1_disk0' }, { pool: 'vms', image: 'vm1_disk1' }], cmdline: 'pvc.disk=/dev/vda pvc.marker=write:m1' });
    assert.match(xml, /<disk type='network' device='disk'>\s*<driver name='qemu' type='raw' cache='none'\/>\s*<source protocol='rbd' name='vms\/vm1_disk0'\/>\s*<target dev='vda' bus='virtio'\/>\s*<\/disk>/);
    assert.match(xml, /name='vms\/vm1_disk1'\/>\s*<target dev='vdb' bus='virtio'\/>/);
    assert.doesNotMatch(xml, /<auth|<host|<config/);
    assert.match(xml, /<cmdline>console=ttyS0 .*pvc\.name=vm1 pvc\.disk=\/dev\/vda pvc\.marker=write:m1<\/cmdline>/);
    // The CLI's rbdlist from this XML (what `pvc vm define` stores for vmd and fence recovery).
    assert.deepEqual(parseDomainXml(xml, 'vm1.xml').rbdVolumes, ['vms/vm1_disk0', 'vms/vm1_disk1']);
  });

  it('puts monitors as <host> children and a conf as <config file>', () => {
    const xml = guestDomainXml({ ...base, disks: [{ pool: 'vms', image: 'd', hosts: [{ name: '10.254.0.1', port: 6789 }, { name: 'mon2' }], config: '/tmp/c/ceph.conf' }] });
    assert.match(xml, /<source protocol='rbd' name='vms\/d'>\s*<host name='10\.254\.0\.1' port='6789'\/>\s*<host name='mon2'\/>\s*<config file='\/tmp\/c\/ceph\.conf'\/>\s*<\/source>/);
    assert.deepEqual(parseDomainXml(xml, 'f').rbdVolumes, ['vms/d']);
  });

  it('refuses names that are not plain RBD names, bad monitors and a 27th disk, naming them', () => {
    const bad = (disk: object): string => {
      try {
        guestDomainXml({ ...base, disks: [disk as never] });
      } catch (err) {
        return (err as Error).message;
      }
      return 'no error';
    };
    assert.match(bad({ pool: 'vms', image: 'a@snap' }), /guest disk image "a@snap" must be a plain RBD name/);
    assert.match(bad({ pool: '-x', image: 'a' }), /guest disk pool "-x"/);
    assert.match(bad({ pool: 'vms', image: "a'/><x" }), /guest disk image/);
    assert.match(bad({ pool: 'vms', image: 'a', hosts: [{ name: 'm o n' }] }), /monitor host "m o n"/);
    assert.match(bad({ pool: 'vms', image: 'a', hosts: [{ name: 'm', port: 70000 }] }), /monitor port 70000/);
    const many = Array.from({ length: 27 }, (_, i) => ({ pool: 'vms', image: `d${i}` }));
    assert.throws(() => guestDomainXml({ ...base, disks: many }), /at most 26 disks/);
  });

  it('finds the virtio disk modules through modules.dep, dependencies first; says why when it cannot', () => {
    const dir = fakeModulesDir([
      'kernel/drivers/virtio/virtio_ring.ko:',
      'kernel/drivers/virtio/virtio.ko: kernel/drivers/virtio/virtio_ring.ko',
      'kernel/drivers/virtio/virtio_pci.ko: kernel/drivers/virtio/virtio.ko kernel/drivers/virtio/virtio_ring.ko',
      'kernel/drivers/block/virtio_blk.ko.xz: kernel/drivers/virtio/virtio.ko kernel/drivers/virtio/virtio_ring.ko',
    ]);
    try {
      const r = resolveDiskModules(dir);
      assert.ok('modules' in r, JSON.stringify(r));
      assert.deepEqual(r.modules.map((m) => [m.name, m.compression]), [['virtio_ring', 'none'], ['virtio', 'none'], ['virtio_pci', 'none'], ['virtio_blk', 'xz']]);
      writeFileSync(join(dir, 'modules.dep'), 'kernel/drivers/virtio/virtio_pci.ko:\n');
      assert.match(JSON.stringify(resolveDiskModules(dir)), /module virtio_blk .*neither in modules\.dep nor built in/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads the disk lines of the console: boot markers, writes, periodic writes, errors', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pvc-console-'));
    try {
      const file = join(dir, 'vm1.log');
      writeFileSync(file, [
        'pvc-guest vm1 up', 'pvc-guest vm1 marker boot none', 'pvc-guest vm1 marker wrote m-1', 'pvc-guest vm1 tick 0',
        'pvc-guest vm1 disk write 0 ok\r', 'pvc-guest vm2 marker boot other', 'pvc-guest vm1 disk write 1 fail',
        'pvc-guest vm1 up', 'pvc-guest vm1 marker boot m-1', 'pvc-guest vm1 disk error no /dev/vda after 10 s', '',
      ].join('\n'));
      assert.deepEqual(consoleDisk(file, 'vm1'), {
        boots: [null, 'm-1'], wrote: ['m-1'], writes: [{ n: 0, ok: true }, { n: 1, ok: false }], errors: ['disk error no /dev/vda after 10 s'],
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
