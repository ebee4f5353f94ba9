import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rejectionOf } from '@pvc/runtime';
import { dnsmasqArgs, dnsmasqEnv, type DnsmasqNetwork } from './dnsmasq-args.js';
import { DhcpError } from './errors.js';
import { dnsmasqLayout } from './layout.js';

const LAYOUT = dnsmasqLayout({ dynamicDirectory: '/run/pvc', logDirectory: '/var/log/pvc' }, '100');
const V4: DnsmasqNetwork = {
  vni: '100', domain: 'net100.local', ip4Gateway: '10.100.0.1', ip6Gateway: null,
  dhcp4Flag: true, dhcp6Flag: false, dhcp4Start: '10.100.0.100', dhcp4End: '10.100.0.200',
};

const BASE = [
  '--conf-file=/dev/null',
  '--domain-needed',
  '--bogus-priv',
  '--no-hosts',
  '--dhcp-authoritative',
  '--filterwin2k',
  '--expand-hosts',
  '--domain=net100.local',
  '--local=/net100.local/',
  '--log-facility=/var/log/pvc/dnsmasq/dnsmasq-100.log',
  '--log-dhcp',
  '--keep-in-foreground',
  '--pid-file=/run/pvc/dnsmasq/dnsmasq-100.pid',
  '--leasefile-ro',
  '--dhcp-script=/run/pvc/dnsmasq/lease-hook',
  '--dhcp-hostsdir=/run/pvc/dnsmasq/100',
  '--bind-interfaces',
];

test('golden: IPv4 with DHCP (the original order; range only when dhcp4_flag)', () => {
  assert.deepEqual(dnsmasqArgs(V4, LAYOUT), [
    ...BASE,
    '--listen-address=10.100.0.1',
    '--auth-zone=net100.local',
    '--auth-peer=10.100.0.1',
    '--auth-server=10.100.0.1',
    '--auth-sec-servers=10.100.0.1',
    '--dhcp-option=option:ntp-server,10.100.0.1',
    '--dhcp-range=10.100.0.100,10.100.0.200,48h',
  ]);
});

test('golden: IPv4 without DHCP: DNS only, no range and no NTP option', () => {
  assert.deepEqual(dnsmasqArgs({ ...V4, dhcp4Flag: false, dhcp4Start: null, dhcp4End: null }, LAYOUT), [
    ...BASE,
    '--listen-address=10.100.0.1',
    '--auth-zone=net100.local',
    '--auth-peer=10.100.0.1',
    '--auth-server=10.100.0.1',
    '--auth-sec-servers=10.100.0.1',
  ]);
});

test('golden: dual stack (dhcp6 and dhcp4): listen on the v6 gateway, RA constructor range, then the v4 range', () => {
  assert.deepEqual(dnsmasqArgs({ ...V4, ip6Gateway: 'fd00:100::1', dhcp6Flag: true }, LAYOUT), [
    ...BASE,
    '--listen-address=fd00:100::1',
    '--auth-zone=net100.local',
    '--auth-peer=fd00:100::1',
    '--auth-server=fd00:100::1',
    '--auth-sec-servers=fd00:100::1',
    '--dhcp-option=option6:dns-server,[fd00:100::1]',
    '--dhcp-option=option6:sntp-server,[fd00:100::1]',
    '--enable-ra',
    '--dhcp-range=net:vmbr100,::,constructor:vmbr100,ra-stateless,ra-names',
    '--dhcp-option=option:ntp-server,10.100.0.1',
    '--dhcp-range=10.100.0.100,10.100.0.200,48h',
  ]);
});

test('golden: IPv6 only: the v6 range', () => {
  const args = dnsmasqArgs({ ...V4, ip4Gateway: null, dhcp4Flag: false, dhcp4Start: null, dhcp4End: null, ip6Gateway: 'fd00:100::1', dhcp6Flag: true }, LAYOUT);
  assert.deepEqual(args.slice(BASE.length + 8), ['--auth-server=fd00:100::1', '--dhcp-range=net:vmbr100,::2,::ffff:ffff:ffff:ffff,constructor:vmbr100,64,24h']);
});

test('env: the bridge (the hook takes the VNI from it) and where Zookeeper is', () => {
  assert.deepEqual(dnsmasqEnv(V4, { hosts: ['hv1', 'hv2:2182'], port: 2181 }), {
    DNSMASQ_BRIDGE_INTERFACE: 'vmbr100', PVC_ZK_HOSTS: 'hv1,hv2:2182', PVC_ZK_PORT: '2181',
  });
});

test('bad networks are refused with the key named', async () => {
  const cases: [Partial<DnsmasqNetwork>, RegExp][] = [
    [{ ip4Gateway: null }, /\/networks\/100\/ip4_gateway: is None/],
    [{ dhcp4Start: null }, /\/networks\/100\/dhcp4_start/],
    [{ dhcp4End: '10.0.0.1; rm' }, /\/networks\/100\/dhcp4_end: "10.0.0.1; rm" is not an address/],
    [{ domain: 'a b' }, /\/networks\/100\/domain/],
    [{ dhcp6Flag: true }, /\/networks\/100\/ip6_gateway/],
  ];
  for (const [change, message] of cases) {
    const err = await rejectionOf(Promise.resolve().then(() => dnsmasqArgs({ ...V4, ...change }, LAYOUT)), DhcpError);
    assert.equal(err.code, 'DHCP_BAD_NETWORK');
    assert.match(err.message, message);
  }
});
