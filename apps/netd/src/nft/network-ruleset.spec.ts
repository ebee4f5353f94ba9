import { test } from 'node:test';
import assert from 'node:assert/strict';
import { aclKey, aclProblem, networkProblem, networkRuleset, type NetworkFirewallSpec, placedAcls, probeRuleset } from './network-ruleset.js';

const net: NetworkFirewallSpec = {
  vni: 1000,
  ip4: { network: '10.100.0.0/24', gateway: '10.100.0.1' },
  ip6: { network: '2001:db8:100::/64', gateway: '2001:db8:100::1' },
  acls: {
    in: [
      { name: 'web', rule: 'tcp dport 80 accept', order: '10' },
      { name: 'ssh', rule: 'tcp dport 22 accept', order: '2' },
      { name: 'drop-all', rule: 'drop', order: 'last' },
      { name: 'b-tie', rule: 'udp dport 53 accept', order: 2 },
      { name: 'unreadable', rule: 'reject', order: null },
    ],
    out: [{ name: 'no-smtp', rule: '  tcp dport 25 reject  ', order: '0' }],
  },
};

const BASE = [
  '# Rules for network vxlan1000',
  'add chain inet filter vxlan1000-in',
  'add chain inet filter vxlan1000-out',
  'add rule inet filter vxlan1000-in counter',
  'add rule inet filter vxlan1000-out counter',
  '# Allow ICMP traffic into the router from network',
  'add rule inet filter input ip protocol icmp meta iifname vmbr1000 counter accept',
  'add rule inet filter input ip6 nexthdr icmpv6 meta iifname vmbr1000 counter accept',
  '# Allow DNS, DHCP, and NTP traffic into the router from network',
  'add rule inet filter input tcp dport 53 meta iifname vmbr1000 counter accept',
  'add rule inet filter input udp dport 53 meta iifname vmbr1000 counter accept',
  'add rule inet filter input udp dport 67 meta iifname vmbr1000 counter accept',
  'add rule inet filter input udp dport 123 meta iifname vmbr1000 counter accept',
  'add rule inet filter input ip6 nexthdr udp udp dport 547 meta iifname vmbr1000 counter accept',
  '# Allow metadata API into the router from network',
  'add rule inet filter input tcp dport 80 meta iifname vmbr1000 counter accept',
  '# Block traffic into the router from network',
  'add rule inet filter input meta iifname vmbr1000 counter drop',
];
const V6 = [
  '# Jump from forward chain to this chain when matching net (IPv6)',
  'add rule inet filter forward ip6 daddr 2001:db8:100::/64 counter jump vxlan1000-in',
  'add rule inet filter forward ip6 saddr 2001:db8:100::/64 counter jump vxlan1000-out',
];
const V4 = [
  '# Jump from forward chain to this chain when matching net (IPv4)',
  'add rule inet filter forward ip daddr 10.100.0.0/24 counter jump vxlan1000-in',
  'add rule inet filter forward ip saddr 10.100.0.0/24 counter jump vxlan1000-out',
];
const HEADER = '# Written by netd for network 1000; rewritten with every change, do not edit.';

test('golden: both families, ACLs in numeric order ("2" before "10"), ties by name, non-numeric last, in before out', () => {
  assert.equal(
    networkRuleset(net),
    [
      HEADER,
      ...BASE,
      ...V6,
      ...V4,
      '# User rules',
      '# in "b-tie" (order 2)',
      'add rule inet filter vxlan1000-in counter udp dport 53 accept',
      '# in "ssh" (order 2)',
      'add rule inet filter vxlan1000-in counter tcp dport 22 accept',
      '# in "web" (order 10)',
      'add rule inet filter vxlan1000-in counter tcp dport 80 accept',
      '# in "drop-all" (order "last")',
      'add rule inet filter vxlan1000-in counter drop',
      '# in "unreadable" (no order)',
      'add rule inet filter vxlan1000-in counter reject',
      '# out "no-smtp" (order 0)',
      'add rule inet filter vxlan1000-out counter tcp dport 25 reject',
      '',
    ].join('\n'),
  );
});

test('golden: IPv4 only, no ACLs; no family at all has no forward jumps', () => {
  const v4only: NetworkFirewallSpec = { ...net, ip6: null, acls: { in: [], out: [] } };
  assert.equal(networkRuleset(v4only), [HEADER, ...BASE, ...V4, '# User rules', ''].join('\n'));
  const v6only: NetworkFirewallSpec = { ...net, ip4: null, acls: { in: [], out: [] } };
  assert.equal(networkRuleset(v6only), [HEADER, ...BASE, ...V6, '# User rules', ''].join('\n'));
  const none: NetworkFirewallSpec = { ...net, ip4: null, ip6: null, acls: { in: [], out: [] } };
  assert.equal(networkRuleset(none), [HEADER, ...BASE, '# User rules', ''].join('\n'));
});

test('ACLs left out are written as a comment naming them, the others stay in place', () => {
  const text = networkRuleset(net, new Set([aclKey(1000, 'in', 'ssh'), aclKey(1000, 'out', 'no-smtp')]));
  const user = text.slice(text.indexOf('# User rules'));
  assert.equal(
    user,
    [
      '# User rules',
      '# in "b-tie" (order 2)',
      'add rule inet filter vxlan1000-in counter udp dport 53 accept',
      '# left out (refused): in "ssh" (order 2)',
      '# in "web" (order 10)',
      'add rule inet filter vxlan1000-in counter tcp dport 80 accept',
      '# in "drop-all" (order "last")',
      'add rule inet filter vxlan1000-in counter drop',
      '# in "unreadable" (no order)',
      'add rule inet filter vxlan1000-in counter reject',
      '# left out (refused): out "no-smtp" (order 0)',
      '',
    ].join('\n'),
  );
});

test('a name or order with a line break stays inside its comment line', () => {
  const odd: NetworkFirewallSpec = { ...net, acls: { in: [{ name: 'a\nflush ruleset', rule: 'accept', order: '1\nflush ruleset' }], out: [] } };
  const text = networkRuleset(odd);
  assert.ok(!text.split('\n').includes('flush ruleset'));
  assert.match(text, /^# in "a\\nflush ruleset" \(order "1\\nflush ruleset"\)$/m);
});

test('placedAcls: direction and command of each ACL, in file order', () => {
  assert.deepEqual(
    placedAcls(net).map((a) => [a.direction, a.name, a.command]),
    [
      ['in', 'b-tie', 'add rule inet filter vxlan1000-in counter udp dport 53 accept'],
      ['in', 'ssh', 'add rule inet filter vxlan1000-in counter tcp dport 22 accept'],
      ['in', 'web', 'add rule inet filter vxlan1000-in counter tcp dport 80 accept'],
      ['in', 'drop-all', 'add rule inet filter vxlan1000-in counter drop'],
      ['in', 'unreadable', 'add rule inet filter vxlan1000-in counter reject'],
      ['out', 'no-smtp', 'add rule inet filter vxlan1000-out counter tcp dport 25 reject'],
    ],
  );
  assert.equal(placedAcls({ ...net, acls: { in: [{ name: 'n', rule: '', order: 0 }], out: [] } })[0]?.command, 'add rule inet filter vxlan1000-in counter');
});

test('networkProblem names the malformed field', () => {
  assert.equal(networkProblem(net), undefined);
  const cases: [Partial<NetworkFirewallSpec>, string][] = [
    [{ vni: 0 }, 'vni 0 is not an integer from 1 to 16777215'],
    [{ vni: 16_777_216 }, 'vni 16777216 is not an integer from 1 to 16777215'],
    [{ vni: 1.5 }, 'vni 1.5 is not an integer from 1 to 16777215'],
    [{ ip4: { network: '10.0.0.0', gateway: '10.0.0.1' } }, 'ip4_network "10.0.0.0" is not an IPv4 CIDR'],
    [{ ip4: { network: '10.0.0.0/33', gateway: '10.0.0.1' } }, 'ip4_network "10.0.0.0/33" is not an IPv4 CIDR'],
    [{ ip4: { network: '10.0.0.0/24 accept', gateway: '10.0.0.1' } }, 'ip4_network "10.0.0.0/24 accept" is not an IPv4 CIDR'],
    [{ ip4: { network: '2001:db8::/64', gateway: '10.0.0.1' } }, 'ip4_network "2001:db8::/64" is not an IPv4 CIDR'],
    [{ ip4: { network: '10.0.0.0/24', gateway: 'None' } }, 'ip4_gateway "None" is not an IPv4 address'],
    [{ ip6: { network: '2001:db8::/129', gateway: '2001:db8::1' } }, 'ip6_network "2001:db8::/129" is not an IPv6 CIDR'],
    [{ ip6: { network: '2001:db8::/64/1', gateway: '2001:db8::1' } }, 'ip6_network "2001:db8::/64/1" is not an IPv6 CIDR'],
    [{ ip6: { network: '2001:db8::/64', gateway: '10.0.0.1' } }, 'ip6_gateway "10.0.0.1" is not an IPv6 address'],
  ];
  for (const [change, problem] of cases) assert.equal(networkProblem({ ...net, ...change }), problem, JSON.stringify(change));
});

test('aclProblem: one rule per ACL (no line break, no ; outside quotes)', () => {
  assert.equal(aclProblem('tcp dport { 22, 80 } accept'), undefined);
  assert.equal(aclProblem('accept comment "a;b"'), undefined);
  assert.equal(aclProblem('accept\nflush ruleset'), 'the rule text contains a line break (one nft rule per ACL)');
  assert.equal(aclProblem('accept\r'), 'the rule text contains a line break (one nft rule per ACL)');
  assert.equal(aclProblem('accept; flush ruleset'), "the rule text contains ';' (one nft rule per ACL)");
  assert.equal(aclProblem('comment "x" ; flush ruleset'), "the rule text contains ';' (one nft rule per ACL)");
});

test('probeRuleset: base table, static include, every network without ACLs, then the one ACL', () => {
  const other: NetworkFirewallSpec = { vni: 7, ip4: null, ip6: null, acls: { in: [{ name: 'x', rule: 'accept', order: 1 }], out: [] } };
  const acl = placedAcls(net)[1];
  assert.ok(acl);
  const lines = probeRuleset('/run/pvc/nft/static', [other, net], acl).split('\n');
  assert.deepEqual(lines.slice(1, 12), [
    'flush ruleset',
    'table inet filter {',
    '  chain forward {',
    '    type filter hook forward priority 0; policy accept;',
    '  }',
    '  chain input {',
    '    type filter hook input priority 0; policy accept;',
    '  }',
    '}',
    'include "/run/pvc/nft/static/*"',
    'add chain inet filter vxlan7-in',
  ]);
  assert.equal(lines.filter((l) => l.startsWith('#')).length, 1, 'only the header is a comment');
  assert.equal(lines.filter((l) => l.includes('counter accept') && l.startsWith('add rule inet filter vxlan7-in')).length, 0, "the other network's ACLs are not in it");
  assert.deepEqual(lines.slice(-2), ['add rule inet filter vxlan1000-in counter tcp dport 22 accept', '']);
  assert.ok(!probeRuleset('/s', [net]).includes('vxlan1000-in counter tcp'));
});
