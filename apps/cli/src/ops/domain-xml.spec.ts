import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CliError } from '../errors.js';
import { cpuTopology, parseDomainXml, serializeDomain, withMemoryMiB, withUuid, withVcpus } from './domain-xml.js';
import { cpuReserve, maxVcpus, whyTooBig } from './vm-config-guards.js';

const XML = `<domain type='kvm'>
  <name>vm1</name>
  <memory unit='GiB'>2</memory>
  <currentMemory unit='KiB'>2097152</currentMemory>
  <vcpu placement='static'>2</vcpu>
  <devices>
    <disk type='network' device='disk'><source protocol='rbd' name='vms/vm1_disk0'/></disk>
    <disk type='file' device='disk'><source file='/x.img'/></disk>
    <interface type='bridge'><mac address='52:54:00:AB:CD:EF'/></interface>
  </devices>
</domain>`;

/** The usage error (exit 2) `fn` throws, with its message. */
function usageError(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof CliError, String(err));
    assert.equal(err.exitCode, 2);
    return err.message;
  }
  assert.fail('expected a usage error');
}

describe('parseDomainXml', () => {
  it('reads name, memory in MiB, vCPUs, MACs and RBD volumes', () => {
    const dx = parseDomainXml(XML, 'vm1.xml');
    assert.equal(dx.name, 'vm1');
    assert.equal(dx.uuid, undefined);
    assert.equal(dx.memoryMiB, 2048);
    assert.equal(dx.vcpus, 2);
    assert.deepEqual(dx.macs, ['52:54:00:ab:cd:ef']);
    assert.deepEqual(dx.rbdVolumes, ['vms/vm1_disk0']);
  });

  it('lists RBD volumes in the forms libvirt writes, and leaves snapshots and other disks out', () => {
    const disks = [
      // vmd's test guest and libvirt's live XML: <host> children, <auth>, <config>, an index attribute.
      `<disk type='network' device='disk'><driver name='qemu' type='raw' cache='none'/>
        <source protocol='rbd' name='vms/disk1'><host name='10.0.0.1' port='6789'/><host name='10.0.0.2'/></source>
        <auth username='libvirt'><secret type='ceph' uuid='0de30000-0000-4000-8000-0000000000bb'/></auth><target dev='vda' bus='virtio'/></disk>`,
      `<disk type="network" device="disk"><source protocol="rbd" name="vms/disk2" index="2"><config file="/etc/ceph/other.conf"/></source></disk>`,
      `<disk type='network' device='cdrom'><source protocol='rbd' name='isos/installer'/><readonly/></disk>`,
      `<disk type='network' device='disk'><source protocol='rbd' name='vms/base@gold'/><readonly/></disk>`,
      `<disk type='network' device='disk'><source protocol='rbd' name='vms/base'><snapshot name='gold'/></source></disk>`,
      `<disk type='network' device='disk'><source protocol='iscsi' name='iqn.2013-07.com.example:iscsi/1'/></disk>`,
      `<disk type='block' device='disk'><source dev='/dev/rbd0'/></disk>`,
      `<disk type='network' device='disk'><source protocol='rbd'/></disk>`,
    ];
    const dx = parseDomainXml(XML.replace(/<disk type='network'[^\n]*\n/, disks.join('\n')), 'f');
    assert.deepEqual(dx.rbdVolumes, ['vms/disk1', 'vms/disk2', 'isos/installer']);
  });

  it('canonicalises a UUID without dashes and in upper case', () => {
    const dx = parseDomainXml(XML.replace('<name>vm1</name>', '<name>vm1</name><uuid>0DE300000000400080000000000000AA</uuid>'), 'f');
    assert.equal(dx.uuid, '0de30000-0000-4000-8000-0000000000aa');
  });

  it('names each kind of bad input', () => {
    assert.match(usageError(() => parseDomainXml('', 'a.xml')), /^a\.xml: empty file/);
    assert.match(usageError(() => parseDomainXml('<domain type="kvm"><name>x</name>', 'a.xml')), /^a\.xml: not well-formed XML/);
    assert.match(usageError(() => parseDomainXml('<pool/>', 'a.xml')), /root element is <pool>, expected <domain>/);
    assert.match(usageError(() => parseDomainXml('<domain><name>x</name></domain>', 'a.xml')), /<domain> has no type attribute/);
    assert.match(usageError(() => parseDomainXml(XML.replace('vm1</name>', '</name>'), 'a.xml')), /the domain has no <name>/);
    assert.match(usageError(() => parseDomainXml(XML.replace('<name>vm1', '<name>a b'), 'a.xml')), /domain name "a b" must not contain/);
    assert.match(usageError(() => parseDomainXml(XML.replace('</name>', '</name><uuid>nope</uuid>'), 'a.xml')), /<uuid> "nope" is not a UUID/);
    assert.match(usageError(() => parseDomainXml(XML.replace("unit='GiB'>2", "unit='GiB'>-2"), 'a.xml')), /<memory> "-2" is not a positive whole number/);
    assert.match(usageError(() => parseDomainXml(XML.replace("unit='GiB'", "unit='parsecs'"), 'a.xml')), /not a libvirt memory unit/);
    assert.match(usageError(() => parseDomainXml(XML.replace("'static'>2", "'static'>0"), 'a.xml')), /<vcpu> "0" is not a positive whole number/);
    assert.match(usageError(() => parseDomainXml(XML.replace('52:54:00:AB:CD:EF', '52:54:00:AB:CD'), 'a.xml')), /MAC address "52:54:00:AB:CD" is malformed/);
  });
});

describe('domain XML edits', () => {
  it('withUuid inserts <uuid> after <name>, keeping the rest', () => {
    const dx = withUuid(parseDomainXml(XML, 'f'), '0de30000-0000-4000-8000-000000000001');
    assert.equal(dx.uuid, '0de30000-0000-4000-8000-000000000001');
    assert.match(serializeDomain(dx), /<name>vm1<\/name><uuid>0de30000-0000-4000-8000-000000000001<\/uuid>/);
    assert.deepEqual(dx.rbdVolumes, ['vms/vm1_disk0']);
    assert.match(serializeDomain(dx), /<vcpu placement="static">2<\/vcpu>/);
  });

  it('withVcpus and withMemoryMiB change only those elements', () => {
    const dx = withMemoryMiB(withVcpus(parseDomainXml(XML, 'f'), 4), 3000);
    assert.equal(dx.vcpus, 4);
    assert.equal(dx.memoryMiB, 3000);
    const text = serializeDomain(dx);
    assert.match(text, /<memory unit="MiB">3000<\/memory>/);
    assert.match(text, /<currentMemory unit="MiB">3000<\/currentMemory>/);
    assert.match(text, /<vcpu placement="static">4<\/vcpu>/);
    assert.match(text, /<source file="\/x.img"\/>/);
  });

  it('cpuTopology reads <cpu><topology> (missing attributes = 1) and refuses bad values', () => {
    assert.equal(cpuTopology(parseDomainXml(XML, 'f')), undefined);
    const withTopo = (attrs: string): string => XML.replace('<devices>', `<cpu mode='host-passthrough'><topology ${attrs}/></cpu><devices>`);
    assert.deepEqual(cpuTopology(parseDomainXml(withTopo("sockets='2' cores='2'"), 'f')), { sockets: 2, cores: 2, threads: 1 });
    assert.match(usageError(() => cpuTopology(parseDomainXml(withTopo("sockets='x'"), 't.xml'))), /t\.xml: <topology sockets="x"> is not a positive whole number/);
  });
});

describe('size guards', () => {
  const node = { name: 'hv', daemonState: 'run', domainState: 'ready', memTotalMiB: 4096, memUsedMiB: 0, memFreeMiB: 4096,
    memAllocMiB: 0, memProvMiB: 0, vcpuAlloc: 0, cpuLoad: 0, domainsCount: 0 };

  it('keeps min(2, floor(cpus/2)) CPUs for the host', () => {
    assert.deepEqual([1, 2, 3, 4, 8, 64].map(cpuReserve), [0, 1, 1, 2, 2, 2]);
    assert.deepEqual([1, 2, 3, 4, 8, 64].map(maxVcpus), [1, 1, 2, 2, 6, 62]);
  });

  it('refuses memory not below the total, too many vCPUs and nodes without figures', () => {
    assert.equal(whyTooBig({ ...node, staticCpus: 2 }, 4095, 1), null);
    assert.match(whyTooBig({ ...node, staticCpus: 2 }, 4096, 1) ?? '', /4096 MiB of memory is not below node hv's total of 4096 MiB/);
    assert.match(whyTooBig({ ...node, staticCpus: 2 }, 1024, 2) ?? '', /2 vCPUs exceed node hv's limit of 1 \(2 CPUs, 1 kept for the host\)/);
    assert.match(whyTooBig({ ...node, memTotalMiB: 0, staticCpus: 2 }, 1, 1) ?? '', /reports no total memory/);
    assert.match(whyTooBig(node, 1, 1) ?? '', /reports no CPU count/);
  });
});
