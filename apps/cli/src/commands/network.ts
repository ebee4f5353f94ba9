import { Option, type Command } from 'commander';
import type { AclDirection } from '@pvc/zk';
import type { CliContext } from '../context.js';
import { usage } from '../errors.js';
import { addAcl, removeAcl } from '../ops/network-acl.js';
import { addNetwork, modifyNetwork, removeNetwork, type NetworkOptions } from '../ops/network-change.js';
import { addReservation, removeDhcpEntry } from '../ops/network-dhcp.js';
import { showAclList, showDhcpList, showNetworkInfo, showNetworkList } from '../ops/network-show.js';
import { waitForNetwork } from '../ops/network-wait.js';
import { addWaitOptions, formatOf, formatOption, notYetGroup, waitOf } from './common.js';

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

const NO_WAIT = 'Takes effect when netd on the nodes sees it (no --wait: the nodes report which networks are up, not their settings).';
const WAIT_NODES = 'the running nodes that report their networks (networks_up; nodes without it are not waited for)';

type WaitOpts = { wait?: boolean; waitTimeout?: string };

/** The settings options shared by `network add` and `network modify`. */
function addSettingsOptions(cmd: Command, modify: boolean): Command {
  const clear = modify ? '; "" clears it' : '';
  return cmd
    .option('-m, --mtu <mtu>', `MTU of the network's devices (at most the cluster MTU − 50 for managed, bridge_mtu for bridged${modify ? '; "" = the maximum' : '; default the maximum'})`)
    .option('-n, --domain <domain>', `DNS domain of the network${modify ? '' : ' (default <description>.local for managed networks)'}`)
    .option('--dns-server <address>', `a name server for the network's NS records (repeatable${modify ? '; replaces the list; "" clears it' : ''})`, collect)
    .option('-i, --ipnet <cidr>', `IPv4 network in CIDR form, e.g. 10.100.0.0/24${clear}`)
    .option('-g, --gateway <address>', `IPv4 gateway inside --ipnet (the primary holds it)${clear}`)
    .option('--ipnet6 <cidr>', `IPv6 network in CIDR form, e.g. fd00:100::/64 (turns DHCPv6 on)${clear}`)
    .option('--gateway6 <address>', `IPv6 gateway inside --ipnet6 (default <prefix>1)${clear}`)
    .option('--dhcp', 'serve DHCPv4 on the network (needs --dhcp-start and --dhcp-end)')
    .option('--no-dhcp', 'no DHCPv4')
    .option('--dhcp-start <address>', `first address of the DHCPv4 range${clear}`)
    .option('--dhcp-end <address>', `last address of the DHCPv4 range${clear}`);
}

/** `pvc network add|modify|remove|list|info`, `acl ...`, `dhcp ...` (inventory §10.1); `sriov` is not here yet. */
export function registerNetwork(program: Command, ctx: CliContext): void {
  const group = program.command('network').description('client networks: add, modify, remove, list, info, acl, dhcp');
  registerChanges(group, ctx);
  registerReads(group, ctx);
  registerAcl(group, ctx);
  registerDhcp(group, ctx);
  notYetGroup(group, 'sriov', 'SR-IOV PFs and VFs', 'SR-IOV is not available yet: no node service reports PFs and VFs in this release', ['pf', 'vf']);
}

function registerChanges(group: Command, ctx: CliContext): void {
  addWaitOptions(addSettingsOptions(
    group.command('add <vni>')
      .summary('add a client network')
      .description('add a client network with VXLAN id (managed) or VLAN id (bridged) <vni>: 1–16777215, bridged 1–4094. Every key in one transaction. '
        + `--wait: until vmbr<vni> is up on ${WAIT_NODES}.`)
      .requiredOption('-d, --description <text>', 'description of the network: unique, no blanks')
      .addOption(new Option('-p, --type <type>', 'managed: PVC runs gateway, DHCP, DNS and firewall; bridged: a plain VLAN bridge').choices(['managed', 'bridged']).makeOptionMandatory()),
    false,
  ), 'setting up the network on the nodes').action(async (vni: string, o: NetworkOptions & WaitOpts) => {
    const waitS = waitOf(o);
    const { zk } = await ctx.cluster();
    const s = await addNetwork(zk, vni, o);
    ctx.output.line(`Added ${s.type} network ${s.vni} "${s.description}"`);
    if (waitS !== undefined) ctx.output.line(`Network ${s.vni}: ${await waitForNetwork(ctx, zk, s.vni, 'up', waitS)}`);
  });

  addSettingsOptions(
    group.command('modify <net>')
      .summary('change settings of a client network')
      .description(`change settings of a network (VNI or description); the result is checked like "add", only changed keys are written, in one transaction. ${NO_WAIT}`)
      .option('-d, --description <text>', 'new description: unique, no blanks')
      .addOption(new Option('-w, --wait', 'not available: nothing in Zookeeper says a node applied new settings (exit 2)').hideHelp()),
    true,
  ).action(async (net: string, o: NetworkOptions & { wait?: boolean }) => {
    if (o.wait) throw usage('network modify has no --wait: the nodes report which networks are up (networks_up), not their settings (MTU, addresses, DHCP), so there is nothing to wait on; netd applies a change when it sees it (at the latest at its 10 s resync)');
    const { zk } = await ctx.cluster();
    const { network, changes } = await modifyNetwork(zk, net, o);
    if (changes.length === 0) return ctx.output.line(`Network ${network.vni} already has these settings: nothing written`);
    ctx.output.line(`Modified network ${network.vni}: ${changes.map((c) => `${c.key}=${c.value === '' ? '""' : c.value}`).join(', ')}`);
  });

  addWaitOptions(group.command('remove <net>')
    .summary('remove a client network (needs --yes)')
    .description('remove a network (VNI or description) with its reservations, leases and ACLs. VMs whose NICs use vmbr<vni> are not checked. Needs --yes. '
      + `--wait: until none of ${WAIT_NODES} lists it (a vmbr<vni> made by an administrator is left in place, so it stays listed).`)
    .option('-y, --yes', 'confirm: the network is deleted'), 'tearing the network down on the nodes')
    .action(async (net: string, o: { yes?: boolean } & WaitOpts) => {
      if (!o.yes) throw usage(`network remove deletes network "${net}": add --yes to confirm`);
      const waitS = waitOf(o);
      const { zk } = await ctx.cluster();
      const n = await removeNetwork(zk, net);
      ctx.output.line(`Removed network ${n.vni} "${n.description}"`);
      if (waitS !== undefined) ctx.output.line(`Network ${n.vni}: ${await waitForNetwork(ctx, zk, n.vni, 'gone', waitS)}`);
    });
}

function registerReads(group: Command, ctx: CliContext): void {
  group.command('list [limit]')
    .description('list the networks; [limit] is a regex on VNI or description')
    .addOption(formatOption())
    .action(async (limit: string | undefined, o: { format?: string }) => {
      await showNetworkList(ctx, limit, formatOf(o));
    });
  group.command('info <net>')
    .description('show one network (VNI or description)')
    .option('-l, --long', 'also show its ACLs, DHCP reservations and leases')
    .addOption(formatOption())
    .action(async (net: string, o: { format?: string; long?: boolean }) => {
      await showNetworkInfo(ctx, net, formatOf(o), o.long === true);
    });
}

/** `--in` / `--out`: undefined when neither is given. */
function directionOf(o: { in?: boolean; out?: boolean }): AclDirection | undefined {
  if (o.in && o.out) throw usage('give --in or --out, not both');
  return o.in ? 'in' : o.out ? 'out' : undefined;
}

function registerAcl(group: Command, ctx: CliContext): void {
  const acl = group.command('acl').description('firewall ACLs of a managed network: add, remove, list');
  acl.command('add <net>')
    .summary('add an nft rule to a network\'s in or out chain')
    .description(`add a firewall rule (nft syntax, e.g. "tcp dport 22 accept") to the in (default) or out chain of a managed network; --order places it at that position (default last) and the chain is renumbered 0..n−1. ${NO_WAIT}`)
    .requiredOption('-d, --description <name>', 'name of the ACL: unique in the network, no blanks')
    .requiredOption('-r, --rule <rule>', 'the nft rule')
    .option('--in', 'inbound chain (default)')
    .option('--out', 'outbound chain')
    .option('-o, --order <n>', 'position in the chain, 0 first (default: last)')
    .action(async (net: string, o: { description: string; rule: string; in?: boolean; out?: boolean; order?: string }) => {
      const direction = directionOf(o) ?? 'in';
      const { zk } = await ctx.cluster();
      const r = await addAcl(zk, net, { description: o.description, rule: o.rule, direction, ...(o.order !== undefined ? { order: o.order } : {}) });
      ctx.output.line(`Added ACL "${o.description}" to network ${r.network.vni} (${direction}, order ${r.order})`);
    });
  acl.command('remove <net> <description>')
    .summary('remove an ACL (needs --yes)')
    .description(`remove an ACL by name; the rest of its chain is renumbered. Needs --yes. ${NO_WAIT}`)
    .option('-y, --yes', 'confirm: the ACL is deleted')
    .action(async (net: string, name: string, o: { yes?: boolean }) => {
      if (!o.yes) throw usage(`acl remove deletes ACL "${name}" of network "${net}": add --yes to confirm`);
      const { zk } = await ctx.cluster();
      const r = await removeAcl(zk, net, name);
      ctx.output.line(`Removed ACL "${r.acl.name}" (${r.acl.direction}) from network ${r.network.vni}`);
    });
  acl.command('list <net> [limit]')
    .description('list the ACLs of a network in chain order; [limit] is a regex on the name')
    .option('--in', 'only the inbound chain')
    .option('--out', 'only the outbound chain')
    .addOption(formatOption())
    .action(async (net: string, limit: string | undefined, o: { in?: boolean; out?: boolean; format?: string }) => {
      await showAclList(ctx, net, directionOf(o), limit, formatOf(o));
    });
}

function registerDhcp(group: Command, ctx: CliContext): void {
  const dhcp = group.command('dhcp').description('DHCPv4 reservations and leases of a managed network: add, remove, list');
  dhcp.command('add <net> <ipaddr> <hostname> <macaddr>')
    .summary('add a static DHCP reservation')
    .description(`reserve IPv4 address <ipaddr> (inside the network) with <hostname> for MAC <macaddr> (xx:xx:xx:xx:xx:xx, stored lower-case). ${NO_WAIT}`)
    .action(async (net: string, ip: string, hostname: string, mac: string) => {
      const { zk } = await ctx.cluster();
      const r = await addReservation(zk, net, ip, hostname, mac);
      ctx.output.line(`Added DHCP reservation ${r.mac} → ${ip} (${hostname}) to network ${r.network.vni}`);
    });
  dhcp.command('remove <net> <entry>')
    .summary('remove a DHCP reservation or lease (needs --yes)')
    .description(`remove the static reservation, else the lease, whose MAC, IP address or hostname is <entry>. Needs --yes. ${NO_WAIT}`)
    .option('-y, --yes', 'confirm: the entry is deleted')
    .action(async (net: string, entry: string, o: { yes?: boolean }) => {
      if (!o.yes) throw usage(`dhcp remove deletes "${entry}" from network "${net}": add --yes to confirm`);
      const { zk } = await ctx.cluster();
      const r = await removeDhcpEntry(zk, net, entry);
      ctx.output.line(`Removed DHCP ${r.kind === 'reservation' ? 'reservation' : 'lease'} ${r.mac} from network ${r.network.vni}`);
    });
  dhcp.command('list <net> [limit]')
    .description('list the static reservations, or with --leases the leases dnsmasq handed out; [limit] is a regex on MAC, IP or hostname')
    .option('--leases', 'show the dynamic leases instead of the reservations')
    .addOption(formatOption())
    .action(async (net: string, limit: string | undefined, o: { leases?: boolean; format?: string }) => {
      await showDhcpList(ctx, net, o.leases === true, limit, formatOf(o));
    });
}
