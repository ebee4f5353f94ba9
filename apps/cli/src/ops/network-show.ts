import type { AclDirection, ClientNetwork, NetworkAcl, NetworkLease, NetworkReservation } from '@pvc/zk';
import type { CliContext } from '../context.js';
import type { Column, Format } from '../output.js';
import { readClientNetworks } from '@pvc/zk';
import { findNetwork, limitMatcher, matchesLimit, problemLine } from './network-read.js';

/** `pvc network list|info`, `acl list`, `dhcp list`: tables for people, JSON for scripts. */

const dash = (v: string | number | null): string => (v === null || v === '' ? '-' : String(v));
const dhcp4Text = (n: ClientNetwork): string => (n.ip4.dhcp ? `${dash(n.ip4.dhcpStart)}–${dash(n.ip4.dhcpEnd)}` : 'off');

const LIST_COLUMNS: readonly Column<ClientNetwork>[] = [
  { header: 'VNI', value: (n) => n.vni, align: 'right' },
  { header: 'Description', value: (n) => n.description },
  { header: 'Type', value: (n) => n.type },
  { header: 'MTU', value: (n) => (n.mtu === null ? 'max' : n.mtu), align: 'right' },
  { header: 'Domain', value: (n) => dash(n.domain) },
  { header: 'IPv4 network', value: (n) => dash(n.ip4.network) },
  { header: 'Gateway', value: (n) => dash(n.ip4.gateway) },
  { header: 'DHCPv4', value: dhcp4Text },
  { header: 'IPv6 network', value: (n) => dash(n.ip6.network) },
  { header: 'Gateway6', value: (n) => dash(n.ip6.gateway) },
];

/** `network list [limit]`: every readable network whose VNI or description matches; bad data on stderr. */
export async function showNetworkList(ctx: CliContext, limit: string | undefined, format: Format): Promise<void> {
  const { zk } = await ctx.cluster();
  const tree = await readClientNetworks(zk);
  const networks = tree.networks.filter((n) => matchesLimit(n, limit));
  if (format === 'json') ctx.output.json(networks);
  else if (networks.length === 0) ctx.output.note('No networks found');
  else ctx.output.table(networks, LIST_COLUMNS);
  for (const p of tree.problems) ctx.output.note(`pvc: warning: ${problemLine(p)}`);
}

/** `network info <net> [--long]`: its settings; `--long` adds the ACLs, reservations and leases. */
export async function showNetworkInfo(ctx: CliContext, ref: string, format: Format, long: boolean): Promise<void> {
  const { zk } = await ctx.cluster();
  const { network: n, problems } = await findNetwork(zk, ref);
  if (format === 'json') return ctx.output.json({ ...n, problems: problems.map(problemLine) });
  ctx.output.keyValues([
    ['VNI', n.vni],
    ['Description', n.description],
    ['Type', n.type],
    ['MTU', n.mtu === null ? "the nodes' maximum" : n.mtu],
    ['Domain', dash(n.domain)],
    ['Name servers', n.nameServers.join(', ') || '-'],
    ['IPv4 network', dash(n.ip4.network)],
    ['IPv4 gateway', dash(n.ip4.gateway)],
    ['DHCPv4', dhcp4Text(n)],
    ['IPv6 network', dash(n.ip6.network)],
    ['IPv6 gateway', dash(n.ip6.gateway)],
    ['DHCPv6', n.ip6.dhcp ? 'on' : 'off'],
    ['Reservations', n.reservations.length],
    ['Leases', n.leases.length],
    ['ACLs', `${n.acls.in.length} in, ${n.acls.out.length} out${long ? '' : ' (--long shows them)'}`],
  ]);
  if (long) {
    for (const [title, rows, show] of [
      ['ACLs', [...n.acls.in, ...n.acls.out], () => ctx.output.table([...n.acls.in, ...n.acls.out], ACL_COLUMNS)],
      ['Reservations', n.reservations, () => ctx.output.table(n.reservations, RESERVATION_COLUMNS)],
      ['Leases', n.leases, () => ctx.output.table(n.leases, LEASE_COLUMNS)],
    ] as const) {
      if (rows.length === 0) continue;
      ctx.output.line();
      ctx.output.line(`${title}:`);
      show();
    }
  }
  for (const p of problems) ctx.output.note(problemLine(p));
}

const ACL_COLUMNS: readonly Column<NetworkAcl>[] = [
  { header: 'Direction', value: (a) => a.direction },
  { header: 'Order', value: (a) => dash(a.order), align: 'right' },
  { header: 'Description', value: (a) => a.name },
  { header: 'Rule', value: (a) => a.rule },
];

/** `acl list <net> [--in|--out] [limit]`: in chain order (numeric `order`). */
export async function showAclList(ctx: CliContext, ref: string, direction: AclDirection | undefined, limit: string | undefined, format: Format): Promise<void> {
  const { zk } = await ctx.cluster();
  const { network, problems } = await findNetwork(zk, ref);
  const acls = (direction ? network.acls[direction] : [...network.acls.in, ...network.acls.out]).filter((a) => limitMatcher(limit)(a.name));
  if (format === 'json') return ctx.output.json(acls);
  if (acls.length === 0) ctx.output.note(`No ACLs in network ${network.vni}`);
  else ctx.output.table(acls, ACL_COLUMNS);
  for (const p of problems) ctx.output.note(problemLine(p));
}

const RESERVATION_COLUMNS: readonly Column<NetworkReservation>[] = [
  { header: 'MAC address', value: (r) => r.mac },
  { header: 'IP address', value: (r) => r.ip },
  { header: 'Hostname', value: (r) => dash(r.hostname) },
];

const LEASE_COLUMNS: readonly Column<NetworkLease>[] = [
  { header: 'MAC address', value: (l) => l.mac },
  { header: 'IP address', value: (l) => l.ip },
  { header: 'Hostname', value: (l) => dash(l.hostname) },
  { header: 'Expires', value: (l) => (l.expiry === 0 ? 'never' : new Date(l.expiry * 1000).toISOString().replace('.000Z', 'Z')) },
  { header: 'Client ID', value: (l) => dash(l.clientId) },
];

/** `dhcp list <net> [--leases] [limit]`: the static reservations, or with `--leases` the dynamic leases. */
export async function showDhcpList(ctx: CliContext, ref: string, leases: boolean, limit: string | undefined, format: Format): Promise<void> {
  const { zk } = await ctx.cluster();
  const { network, problems } = await findNetwork(zk, ref);
  const m = limitMatcher(limit);
  const match = (e: { mac: string; ip: string; hostname: string }): boolean => m(e.mac) || m(e.ip) || m(e.hostname);
  if (leases) {
    const rows = network.leases.filter(match);
    if (format === 'json') return ctx.output.json(rows);
    if (rows.length === 0) ctx.output.note(`No DHCP leases in network ${network.vni}`);
    else ctx.output.table(rows, LEASE_COLUMNS);
  } else {
    const rows = network.reservations.filter(match);
    if (format === 'json') return ctx.output.json(rows);
    if (rows.length === 0) ctx.output.note(`No DHCP reservations in network ${network.vni}`);
    else ctx.output.table(rows, RESERVATION_COLUMNS);
  }
  for (const p of problems) ctx.output.note(problemLine(p));
}
