import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rejectionOf } from '@pvc/runtime';
import { domainXmlFacts } from '@pvc/zk';
import { liveDevices, prepareXml, xmlAttr, xmlUuid } from './domain-xml.js';
import { VmdError } from './errors.js';
import { LIVE_XML } from './host/stats-samples.js';

const U = 'aaaaaaaa-0000-0000-0000-000000000001';

describe('domain XML handling', () => {
  it('keeps the XML as stored when the uuid matches and the type needs no change', () => {
    const xml = `<domain type='kvm'><name>a</name><uuid>${U}</uuid></domain>`;
    assert.equal(prepareXml(xml, U, { domainType: 'kvm' }), xml);
  });
  it('domain_type qemu turns a kvm domain into qemu (TCG); qemu stays', () => {
    assert.match(prepareXml(`<domain type="kvm"><uuid>${U}</uuid></domain>`, U, { domainType: 'qemu' }), /^<domain type="qemu">/);
    assert.match(prepareXml(`<domain type='qemu'><uuid>${U}</uuid></domain>`, U, { domainType: 'kvm' }), /^<domain type='qemu'>/);
  });
  it('adds the key\'s uuid when the XML has none', () => {
    assert.equal(xmlUuid(prepareXml("<domain type='kvm'><name>a</name></domain>", U, { domainType: 'kvm' })), U);
  });
  it('refuses a uuid that differs from the key, and a document without <domain>', async () => {
    const other = 'bbbbbbbb-0000-0000-0000-000000000002';
    const e1 = await rejectionOf(Promise.resolve().then(() => prepareXml(`<domain><uuid>${other}</uuid></domain>`, U, { domainType: 'kvm' })), VmdError);
    assert.equal(e1.code, 'BAD_XML');
    assert.match(e1.message, new RegExp(other));
    const e2 = await rejectionOf(Promise.resolve().then(() => prepareXml('garbage', U, { domainType: 'kvm' })), VmdError);
    assert.equal(e2.code, 'BAD_XML');
  });
  it('reads <memory> in MiB across units (default KiB): the shared reader vmd uses for memprov', () => {
    const mib = (xml: string) => domainXmlFacts(xml).memoryMiB;
    assert.equal(mib('<memory>131072</memory>'), 128);
    assert.equal(mib("<memory unit='MiB'>96</memory>"), 96);
    assert.equal(mib("<memory unit='GiB'>2</memory>"), 2048);
    assert.equal(mib("<memory unit='furlongs'>2</memory>"), undefined);
    assert.equal(mib('<domain/>'), undefined);
  });
  it('reads attributes with either quote, entities decoded, never a longer name ending the same', () => {
    assert.equal(xmlAttr(`<source file="/a&amp;b.img"/>`, 'file'), '/a&b.img');
    assert.equal(xmlAttr("<graphics type='vnc' autoport='yes'>", 'port'), undefined);
  });
});

describe('liveDevices', () => {
  it('lists disks with a source (RBD name, else file) and bridge interfaces, by target device, in order', () => {
    assert.deepEqual(liveDevices(LIVE_XML), {
      disks: [{ dev: 'sda', source: 'vms/testvm_disk0' }, { dev: 'sdc', source: '/var/lib/libvirt/images/scratch.qcow2' }],
      bridges: [{ dev: 'vnet0', bridge: 'vmbr100' }, { dev: 'vnet1', bridge: 'vmbr200' }],
    });
  });
  it('an XML without devices has none', () => {
    assert.deepEqual(liveDevices('<domain/>'), { disks: [], bridges: [] });
  });
});
