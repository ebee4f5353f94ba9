import {
  bridgeOf, memberOf, MIN_MTU, OWNER_ALIAS, vniOfDevice, VXLAN_OVERHEAD, VXLAN_PORT,
  type ClientNetPlan, type ClientNetPlanInput, type ClientNetwork, type DeviceAction, type Ipv6Settings,
  type NetworkProblem, type NodeFacts, type ObservedDevices, type ObservedLink,
} from './model.js';

/**
 * The client network devices of this node as a pure function (inventory §7.1): wanted networks +
 * node facts + observed links → the ordered changes. Level-based: when the host already matches,
 * the answer is empty, so a pass after a restart, a lost watch or a failed change converges without
 * repeating what is done.
 *
 * Rows, per network (`member` = `vxlan<vni>` for managed, `vlan<vni>` for bridged; `ours` = alias
 * {@link OWNER_ALIAS}):
 * | observed | changes |
 * |---|---|
 * | no member, no bridge | create member (MTU), create `vmbr<vni>` (MTU), member into bridge, both up, IPv6 setting, flooding entries |
 * | member of the wrong kind/id/port/lower, ours | delete it, then as if missing |
 * | member or bridge of the wrong shape, not ours | nothing: problem `foreign-device` |
 * | right shape, not ours | used as it is (settings converge); never deleted |
 * | MTU ≠ wanted | set MTU live on both (raising: member first; lowering: bridge first) |
 * | member not in the bridge / a device down | set master / set up |
 * | flooding entries ≠ other nodes' cluster addresses (managed) | append the missing, then delete the extra |
 * | lower device missing / bridged without bridge_device | nothing: problem `no-lower-device` / `no-bridge-device` |
 * | MTU key below 68 or not an integer; VNI outside 1–16777215 | nothing: problem `bad-mtu` / `bad-vni` |
 *
 * Wanted MTU: managed min(`mtu`, cluster MTU − 50); bridged min(`mtu`, `bridge_mtu`); an empty
 * `mtu` is the maximum. IPv6 setting (when the host has IPv6): managed `accept_dad=0`, bridged
 * `disable_ipv6=1` on the bridge, as the original. The original's `ethtool -K vmbr<vni> tx off` is
 * not done: ethtool is not installed on these hosts (see docs/netd-cephd.md).
 *
 * Removal: every link of ours named `vmbr<n>`, `vxlan<n>` or `vlan<n>` that no wanted network
 * needs is deleted (the bridge first), so a removed network, or one whose type changed, leaves
 * nothing netd made. Removals come first, then the networks in VNI order.
 */
export function planClientNetworks(input: ClientNetPlanInput): ClientNetPlan {
  const networks = [...new Map(input.networks.map((n) => [n.vni, n])).values()].sort((a, b) => a.vni - b.vni);
  const links = new Map(input.observed.links.map((l) => [l.name, l]));
  const actions: DeviceAction[] = [...teardown(networks, input.observed.links)];
  const problems: NetworkProblem[] = [];
  for (const n of networks) {
    const out = planNetwork(n, input.facts, links, input.observed);
    if ('problem' in out) problems.push(out.problem);
    else actions.push(...out.actions);
  }
  return { actions, problems };
}

const isOurs = (l: ObservedLink | undefined): boolean => l?.alias === OWNER_ALIAS;

function teardown(networks: readonly ClientNetwork[], links: readonly ObservedLink[]): DeviceAction[] {
  const needed = new Set(networks.flatMap((n) => [bridgeOf(n.vni), memberOf(n)]));
  const stale = links
    .filter((l) => isOurs(l) && !needed.has(l.name) && vniOfDevice(l.name) !== undefined)
    // Per VNI, the bridge before the device in it (the original: delif, delbr, then delete).
    .sort((a, b) => vniOfDevice(a.name)! - vniOfDevice(b.name)! || Number(b.kind === 'bridge') - Number(a.kind === 'bridge') || a.name.localeCompare(b.name));
  return stale.map((l) => ({ kind: 'delete', vni: vniOfDevice(l.name)!, device: l.name, why: 'no wanted network needs it' }));
}

type NetworkOutcome = { actions: DeviceAction[] } | { problem: NetworkProblem };

/** The lower device and the largest MTU of a network, or the problem that prevents planning it. */
function limits(n: ClientNetwork, f: NodeFacts, links: ReadonlyMap<string, ObservedLink>): { lower: string; mtu: number } | NetworkProblem {
  const vni = n.vni;
  if (!Number.isInteger(vni) || vni < 1 || vni > 16_777_215) return { vni, reason: 'bad-vni', detail: `VNI ${vni} is outside 1–16777215` };
  if (n.type === 'bridged' && (f.bridgeDevice === undefined || f.bridgeMtu === undefined)) {
    return { vni, reason: 'no-bridge-device', detail: 'a bridged network needs bridge_device and bridge_mtu in the node configuration' };
  }
  const lower = n.type === 'managed' ? f.clusterDevice : f.bridgeDevice!;
  if (!links.has(lower)) return { vni, reason: 'no-lower-device', detail: `device ${lower} (${n.type === 'managed' ? 'cluster' : 'bridge'} device) does not exist` };
  const max = n.type === 'managed' ? f.clusterMtu - VXLAN_OVERHEAD : f.bridgeMtu!;
  if (n.mtu !== null && (!Number.isInteger(n.mtu) || n.mtu < MIN_MTU)) return { vni, reason: 'bad-mtu', detail: `mtu ${n.mtu} is not an integer ≥ ${MIN_MTU}` };
  if (max < MIN_MTU) return { vni, reason: 'bad-mtu', detail: `the largest MTU allowed (${max}) is below ${MIN_MTU}` };
  return { lower, mtu: n.mtu === null ? max : Math.min(n.mtu, max) };
}

/** Whether an observed member device is what netd would create (kind, id, port, lower device). */
function memberFits(l: ObservedLink, n: ClientNetwork, lower: string): boolean {
  if (n.type === 'managed') return l.kind === 'vxlan' && l.id === n.vni && l.dstport === VXLAN_PORT && l.lower === lower;
  return l.kind === 'vlan' && l.id === n.vni && l.lower === lower;
}

function describeShape(l: ObservedLink): string {
  const parts = [`kind ${l.kind ?? 'none'}`, l.id === undefined ? '' : `id ${l.id}`, l.dstport === undefined ? '' : `port ${l.dstport}`, l.lower === undefined ? '' : `on ${l.lower}`];
  return parts.filter((p) => p !== '').join(', ');
}

function planNetwork(n: ClientNetwork, f: NodeFacts, links: ReadonlyMap<string, ObservedLink>, observed: ObservedDevices): NetworkOutcome {
  const lim = limits(n, f, links);
  if ('reason' in lim) return { problem: lim };
  const { vni } = n;
  const memberName = memberOf(n);
  const bridgeName = bridgeOf(vni);
  const actions: DeviceAction[] = [];
  let member = links.get(memberName);
  let bridge = links.get(bridgeName);
  const misfits: [ObservedLink, string][] = [];
  if (member && !memberFits(member, n, lim.lower)) misfits.push([member, n.type === 'managed' ? `VXLAN id ${vni} port ${VXLAN_PORT} on ${lim.lower}` : `VLAN ${vni} on ${lim.lower}`]);
  if (bridge && bridge.kind !== 'bridge') misfits.push([bridge, 'a bridge']);
  const foreign = misfits.find(([l]) => !isOurs(l));
  if (foreign) {
    const [l, want] = foreign;
    return { problem: { vni, reason: 'foreign-device', detail: `${l.name} exists (${describeShape(l)}) and was not made by netd; netd wants ${want}: left alone` } };
  }
  for (const [l, want] of misfits) {
    actions.push({ kind: 'delete', vni, device: l.name, why: `it is ${describeShape(l)}, not ${want}` });
    if (l === member) member = undefined;
    if (l === bridge) bridge = undefined;
  }
  const created = { member: member === undefined, bridge: bridge === undefined };
  if (!member) actions.push({ kind: n.type === 'managed' ? 'create-vxlan' : 'create-vlan', vni, device: memberName, lower: lim.lower, mtu: lim.mtu });
  if (!bridge) actions.push({ kind: 'create-bridge', vni, device: bridgeName, mtu: lim.mtu });
  actions.push(...mtuChanges(vni, lim.mtu, [memberName, member?.mtu ?? lim.mtu], [bridgeName, bridge?.mtu ?? lim.mtu]));
  if (member?.master !== bridgeName) actions.push({ kind: 'set-master', vni, device: memberName, bridge: bridgeName });
  if (!member?.up) actions.push({ kind: 'set-up', vni, device: memberName });
  if (!bridge?.up) actions.push({ kind: 'set-up', vni, device: bridgeName });
  actions.push(...ipv6Changes(n, bridgeName, created.bridge, observed));
  if (n.type === 'managed') actions.push(...floodChanges(vni, memberName, created.member ? [] : (observed.flood.get(memberName) ?? []), f));
  return { actions };
}

/** Live MTU changes: raising, the member first (the bridge follows its ports); lowering, the bridge first. */
function mtuChanges(vni: number, mtu: number, member: [string, number], bridge: [string, number]): DeviceAction[] {
  const order = mtu > member[1] ? [member, bridge] : [bridge, member];
  return order.filter(([, now]) => now !== mtu).map(([device]) => ({ kind: 'set-mtu', vni, device, mtu }));
}

function ipv6Changes(n: ClientNetwork, bridge: string, created: boolean, observed: ObservedDevices): DeviceAction[] {
  if (observed.ipv6 === undefined) return [];
  const key: keyof Ipv6Settings = n.type === 'managed' ? 'accept_dad' : 'disable_ipv6';
  const value = n.type === 'managed' ? '0' : '1';
  const now = created ? undefined : observed.ipv6.get(bridge)?.[key];
  return now === value ? [] : [{ kind: 'set-ipv6', vni: n.vni, device: bridge, key, value }];
}

/** Head-end replication: one all-zeros entry per other node's cluster address, no more. */
function floodChanges(vni: number, device: string, have: readonly string[], f: NodeFacts): DeviceAction[] {
  const want = [...new Set(f.peers)].filter((p) => p !== f.clusterAddress).sort();
  const del = [...new Set(have)].filter((d) => !want.includes(d)).sort();
  const add = want.filter((d) => !have.includes(d));
  // The new destinations first: flooding never reaches fewer nodes than both lists have in common.
  return [
    ...add.map((dst): DeviceAction => ({ kind: 'flood-add', vni, device, dst })),
    ...del.map((dst): DeviceAction => ({ kind: 'flood-del', vni, device, dst })),
  ];
}
