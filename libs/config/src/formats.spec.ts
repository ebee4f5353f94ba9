import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  formatCidr,
  formatIpv4,
  hostRange,
  isDomainName,
  isHostIn,
  isHostOrIpv4,
  isNetworkAddress,
  isShortHostname,
  nthHost,
  parseCidr,
  parseIpv4,
  trailingNumber,
} from './formats.js';

test('IPv4 parsing is strict', () => {
  assert.equal(parseIpv4('10.255.0.1'), 0x0aff0001);
  assert.equal(formatIpv4(0xffffffff), '255.255.255.255');
  for (const bad of ['10.255.0', '10.255.0.256', '010.1.1.1', '1.1.1.1.', 'a.b.c.d', '']) assert.equal(parseIpv4(bad), undefined, bad);
});

test('CIDR parsing and network checks', () => {
  const net = parseCidr('10.254.0.0/24');
  assert.ok(net);
  assert.equal(formatCidr(net), '10.254.0.0/24');
  assert.equal(isNetworkAddress(net), true);
  assert.equal(isNetworkAddress(parseCidr('10.254.0.1/24') ?? net), false);
  for (const bad of ['10.0.0.0/33', '10.0.0.0', '10.0.0.0/', '10.0.0.0/08']) assert.equal(parseCidr(bad), undefined, bad);
});

test('host ranges follow Python hosts()', () => {
  const p = (s: string) => parseCidr(s) ?? assert.fail(s);
  assert.deepEqual(hostRange(p('10.0.0.0/24')), { first: 0x0a000001, count: 254 });
  assert.equal(hostRange(p('10.0.0.0/31')).count, 2);
  assert.equal(hostRange(p('10.0.0.7/32')).count, 1);
  assert.equal(formatIpv4(nthHost(p('10.0.0.0/24'), 1) ?? 0), '10.0.0.1');
  assert.equal(formatIpv4(nthHost(p('10.0.0.0/24'), 254) ?? 0), '10.0.0.254');
  assert.equal(nthHost(p('10.0.0.0/24'), 255), undefined);
  assert.equal(nthHost(p('10.0.0.0/24'), 0), undefined);
  assert.equal(isHostIn(p('10.0.0.0/24'), parseIpv4('10.0.0.255') ?? 0), false);
  assert.equal(isHostIn(p('10.0.0.0/24'), parseIpv4('10.0.0.10') ?? 0), true);
});

test('host and domain names', () => {
  assert.equal(isShortHostname('pvchv1'), true);
  assert.equal(isShortHostname('pvc-hv1'), true);
  assert.equal(isShortHostname('pvchv1.lan'), false);
  assert.equal(isShortHostname('-bad'), false);
  assert.equal(isDomainName('pvc.local'), true);
  assert.equal(isDomainName('pvc..local'), false);
  assert.equal(isHostOrIpv4('pvchv1-lom'), true);
  assert.equal(isHostOrIpv4('10.0.0.4'), true);
  assert.equal(isHostOrIpv4('10.0.0.400'), false);
});

test('trailing node numbers', () => {
  assert.equal(trailingNumber('pvchv1'), 1);
  assert.equal(trailingNumber('hv012'), 12);
  assert.equal(trailingNumber('hv1a'), undefined);
  assert.equal(trailingNumber('node'), undefined);
});
