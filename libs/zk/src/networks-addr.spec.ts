import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkCidr, checkDhcpRange, checkGateway, checkIp, checkMac, checkVni, defaultIp6Gateway, formatIp } from './networks-addr.js';

const cidr = (t: string) => {
  const c = checkCidr(t);
  assert.ok(c.ok, t);
  return c.value;
};

describe('checkVni', () => {
  it('takes 1–16777215 for managed networks, 1–4094 for bridged ones (VLAN ids)', () => {
    assert.deepEqual(checkVni('100'), { ok: true, value: 100 });
    assert.deepEqual(checkVni('16777215', 'managed'), { ok: true, value: 16777215 });
    assert.deepEqual(checkVni('4094', 'bridged'), { ok: true, value: 4094 });
    for (const [t, type] of [['0', undefined], ['16777216', 'managed'], ['4095', 'bridged'], ['1e3', undefined], ['-1', undefined], ['', undefined], ['010', undefined], ['abc', undefined]] as const) {
      assert.equal(checkVni(t, type).ok, false, `${t} ${type ?? ''}`);
    }
    assert.match((checkVni('5000', 'bridged') as { why: string }).why, /VLAN, 1–4094/);
  });
});

describe('addresses', () => {
  it('parses IPv4 strictly (no leading zeros, each part ≤ 255)', () => {
    assert.equal(checkIp('10.0.0.1', 4).ok, true);
    for (const t of ['10.0.0.256', '10.0.0', '10.0.0.01', '10.0.0.1 ', 'fd00::1']) assert.equal(checkIp(t, 4).ok, false, t);
  });
  it('parses IPv6 with :: and an embedded IPv4 tail', () => {
    const a = checkIp('fd00:1::1', 6);
    assert.ok(a.ok);
    assert.equal(formatIp(6, a.value.value), 'fd00:1:0:0:0:0:0:1');
    const b = checkIp('::ffff:10.0.0.1');
    assert.ok(b.ok);
    assert.equal(formatIp(6, b.value.value), '0:0:0:0:0:ffff:a00:1');
    for (const t of ['fd00:::1', 'fe80::1%eth0', 'g::1', '1:2:3:4:5:6:7:8:9']) assert.equal(checkIp(t, 6).ok, false, t);
  });
  it('CIDR: address/prefix, host bits zero, prefix within the family', () => {
    assert.deepEqual(checkCidr('10.1.0.0/24', 4), { ok: true, value: { family: 4, network: 0x0a010000n, prefix: 24 } });
    assert.equal(checkCidr('fd00:1::/64', 6).ok, true);
    assert.match((checkCidr('10.1.0.1/24') as { why: string }).why, /host bits set \(the network is 10\.1\.0\.0\/24\)/);
    for (const t of ['10.1.0.0', '10.1.0.0/33', '10.1.0.0/x', 'fd00::/129', '10.1.0.0/24/1']) assert.equal(checkCidr(t).ok, false, t);
    assert.equal(checkCidr('fd00::/64', 4).ok, false, 'family restricts');
  });
  it('gateway: a host address inside the network', () => {
    const net = cidr('10.1.0.0/24');
    assert.equal(checkGateway(net, '10.1.0.0/24', '10.1.0.1').ok, true);
    assert.equal(checkGateway(net, '10.1.0.0/24', '10.1.0.254').ok, true);
    for (const g of ['10.1.1.1', '10.1.0.0', '10.1.0.255', 'x']) assert.equal(checkGateway(net, '10.1.0.0/24', g).ok, false, g);
    assert.match((checkGateway(net, '10.1.0.0/24', '10.2.0.1') as { why: string }).why, /gateway 10\.2\.0\.1 is not a host address inside 10\.1\.0\.0\/24/);
    assert.equal(checkGateway(cidr('fd00:1::/64'), 'fd00:1::/64', 'fd00:1::1').ok, true);
    assert.equal(checkGateway(cidr('fd00:1::/64'), 'fd00:1::/64', 'fd00:2::1').ok, false);
  });
  it('DHCP range: both ends inside, start ≤ end', () => {
    const net = cidr('10.1.0.0/24');
    assert.equal(checkDhcpRange(net, 'n', '10.1.0.100', '10.1.0.200').ok, true);
    assert.match((checkDhcpRange(net, 'n', '10.1.0.200', '10.1.0.100') as { why: string }).why, /after the end/);
    assert.match((checkDhcpRange(net, 'n', '10.1.0.100', '10.1.1.200') as { why: string }).why, /DHCP end 10\.1\.1\.200 is not a host address inside n/);
    assert.match((checkDhcpRange(net, 'n', 'x', '10.1.0.2') as { why: string }).why, /DHCP start "x" is not an IPv4 address/);
  });
  it('MAC: six hex pairs with ":", lower-cased', () => {
    assert.deepEqual(checkMac('52:54:00:AB:cd:01'), { ok: true, value: '52:54:00:ab:cd:01' });
    for (const t of ['52-54-00-ab-cd-01', '52:54:00:ab:cd', '5254.00ab.cd01', '52:54:00:ab:cd:0g']) assert.equal(checkMac(t).ok, false, t);
  });
  it("default IPv6 gateway is the original's <address part>1", () => {
    assert.equal(defaultIp6Gateway('fd00:1::/64'), 'fd00:1::1');
  });
});
