import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bridgeVni, interfaceBridges, interfaceMacs, xmlNetworks } from './domain-bridges.js';
import { domainXmlFacts } from './records.js';

const xmlWith = (...bridges: string[]): string =>
  `<domain type='qemu'><name>nic1</name><memory unit='MiB'>128</memory><vcpu>1</vcpu><devices>` +
  bridges.map((b) => `<interface type='bridge'><mac address='52:54:00:00:00:01'/><source bridge='${b}'/><model type='virtio'/></interface>`).join('') +
  `<interface type='network'><source network='vmbr300'/></interface><interface type="direct"><source dev="vmbr400" mode="bridge"/></interface></devices></domain>`;

describe('domain XML bridges', () => {
  it('interfaceBridges: the source bridge of each bridge interface once, in order; other interface types are ignored', () => {
    assert.deepEqual(interfaceBridges(xmlWith('vmbr100', 'brcluster', 'vmbr100')), ['vmbr100', 'brcluster']);
    assert.deepEqual(interfaceBridges(xmlWith()), []);
    assert.deepEqual(interfaceBridges(`<interface type="bridge">\n  <source bridge="a&amp;b"/>\n</interface>`), ['a&b'], 'double quotes, entities');
    assert.deepEqual(interfaceBridges(`<interface type='bridge'><model type='virtio'/></interface>`), [], 'no source');
  });

  it('bridgeVni: vmbr<decimal> only', () => {
    const rows: [string, number | undefined][] = [
      ['vmbr1100', 1100], ['vmbr0', 0], ['vmbr01', undefined], ['vmbr', undefined], ['vmbr12a', undefined], ['brcluster', undefined], ['xvmbr5', undefined],
    ];
    for (const [name, want] of rows) assert.equal(bridgeVni(name), want, name);
  });

  it('xmlNetworks and domainXmlFacts: the VNIs of the vmbr<vni> bridges, ascending, each once', () => {
    const xml = xmlWith('vmbr1200', 'brcluster', 'vmbr1100', 'vmbr1200', 'vmbr01');
    assert.deepEqual(xmlNetworks(xml), [1100, 1200]);
    assert.deepEqual(domainXmlFacts(xml).networks, [1100, 1200]);
    assert.deepEqual(domainXmlFacts(xmlWith('brcluster')).networks, []);
  });

  it('interfaceMacs: every interface type, lower-cased, once; a broken document or a malformed MAC is refused whole', () => {
    const xml = `<?xml version='1.0'?>\n<domain type='kvm'><name>a</name><devices>` +
      `<interface type='bridge'><mac address='52:54:00:AA:00:01'/><source bridge='vmbr100'/></interface>` +
      `<interface type="direct"><mac address="52:54:00:aa:00:02"/><source dev="ens1f0v3" mode="passthrough"/></interface>` +
      `<interface type='hostdev' managed='yes'><mac address='52:54:00:aa:00:03'/></interface>` +
      `<interface type='bridge'><source bridge='vmbr200'/></interface>` +
      `<interface type='bridge'><mac address='52:54:00:aa:00:01'/><source bridge='vmbr300'/></interface></devices></domain>\n`;
    assert.deepEqual(interfaceMacs(xml), { ok: true, macs: ['52:54:00:aa:00:01', '52:54:00:aa:00:02', '52:54:00:aa:00:03'] });
    assert.deepEqual(interfaceMacs(`<domain type='kvm'><name>b</name></domain>`), { ok: true, macs: [] });
    assert.equal(interfaceMacs('not xml at all').ok, false);
    assert.equal(interfaceMacs(xml.slice(0, 200)).ok, false, 'truncated');
    assert.equal(interfaceMacs(`<domain type='kvm'><devices><interface type='bridge'><mac address='52:54:00:aa:00:01'/></devices></domain>`).ok, false, 'interface not closed');
    const bad = interfaceMacs(`<domain type='kvm'><devices><interface type='bridge'><mac address='52:54:00:zz:00:01'/></interface></devices></domain>`);
    assert.deepEqual(bad, { ok: false, why: 'interface MAC address "52:54:00:zz:00:01" is malformed' });
  });
});
