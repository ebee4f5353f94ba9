import type { Config, NetworkName, NodeNetworking } from '@pvc/config';
import type { HostNetworkProblem } from './errors.js';
import { inSubnet } from './ipv4.js';

/** The config key of one node network setting: `pvc.system.configuration.networking.cluster.mtu`. */
export function networkKey(network: NetworkName, leaf: 'device' | 'mtu' | 'address'): string {
  return `pvc.system.configuration.networking.${network}.${leaf}`;
}

/** The config key of the upstream gateway. */
export const GATEWAY_KEY = 'pvc.cluster.networks.upstream.gateway';

/** The bridge the original makes for each network (when it does not share an earlier one's device). */
export const BRIDGE_OF: Readonly<Record<NetworkName, string>> = Object.freeze({ cluster: 'brcluster', storage: 'brstorage', upstream: 'brupstream' });

/** One node address wanted on a bridge. */
export interface WantedAddress {
  readonly network: NetworkName;
  readonly ip: string;
  readonly prefix: number;
  readonly cidr: string;
}

/** One bridge over one device, the device's MTU, and the node addresses on it. */
export interface WantedBridge {
  readonly bridge: string;
  readonly device: string;
  readonly mtu: number;
  /** The network whose `device` and `mtu` keys this bridge follows (the first of those sharing the device). */
  readonly network: NetworkName;
  readonly addresses: readonly WantedAddress[];
}

/** The default route via the upstream gateway, on the bridge holding an address of its network. */
export interface WantedRoute {
  readonly gateway: string;
  readonly bridge: string;
}

/** A remark on the configuration that changes nothing (logged as a warning). */
export interface PlanNote {
  readonly key: string;
  readonly message: string;
}

/** The host interfaces as the configuration wants them ({@link planHostInterfaces}). */
export interface HostInterfacePlan {
  readonly bridges: readonly WantedBridge[];
  readonly route?: WantedRoute | undefined;
  readonly notes: readonly PlanNote[];
  /** Found from the configuration alone (the gateway): nothing may be changed while there are any. */
  readonly problems: readonly HostNetworkProblem[];
}

/** Networks in the original's set-up order: cluster first, its bridge takes the others sharing its device. */
const ORDER: readonly NetworkName[] = ['cluster', 'storage', 'upstream'];

function bridgesOf(net: NodeNetworking, notes: PlanNote[]): WantedBridge[] {
  const out: { bridge: string; device: string; mtu: number; network: NetworkName; addresses: WantedAddress[] }[] = [];
  for (const name of ORDER) {
    const n = net[name];
    let b = out.find((x) => x.device === n.device);
    if (!b) {
      b = { bridge: BRIDGE_OF[name], device: n.device, mtu: n.mtu, network: name, addresses: [] };
      out.push(b);
    } else if (n.mtu !== b.mtu) {
      notes.push({ key: networkKey(name, 'mtu'), message: `${n.device} is shared with the ${b.network} network, whose MTU ${b.mtu} applies; ${n.mtu} is ignored` });
    }
    const r = n.resolved;
    if (r && !b.addresses.some((a) => a.cidr === r.cidr)) b.addresses.push({ network: name, ip: r.ip, prefix: r.prefix, cidr: r.cidr });
  }
  return out;
}

function routeOf(config: Config, bridges: readonly WantedBridge[], notes: PlanNote[], problems: HostNetworkProblem[]): WantedRoute | undefined {
  const gateway = config.cluster.networks?.upstream.gateway;
  const net = config.system.configuration.networking;
  if (gateway === undefined || net === undefined) return undefined;
  const holders = bridges.flatMap((b) => b.addresses.filter((a) => inSubnet(gateway, a.ip, a.prefix)).map((a) => ({ bridge: b.bridge, network: a.network })));
  const holder = holders.find((h) => h.network === 'upstream') ?? holders[0];
  if (holder) return { gateway, bridge: holder.bridge };
  if (net.upstream.resolved === null) {
    notes.push({ key: networkKey('upstream', 'address'), message: `None: this node has no address on the upstream network, so no default route via ${gateway}` });
    return undefined;
  }
  const mine = bridges.flatMap((b) => b.addresses.map((a) => `${a.network} ${a.cidr}`)).join(', ');
  problems.push({ code: 'HOSTNET_GATEWAY_UNREACHABLE', key: GATEWAY_KEY, message: `gateway ${gateway} is not inside any network this node has an address on (${mine})` });
  return undefined;
}

/**
 * The host interface set-up of the original (`setup_interfaces`) as wanted state: the cluster
 * device with its MTU, up, in `brcluster` (same MTU, up) with the node's cluster address; storage
 * and upstream likewise on `brstorage`/`brupstream`, or only their addresses on the bridge of an
 * earlier network whose device they share (the original handles only sharing the cluster device;
 * sharing the storage device between storage and upstream puts upstream's address on `brstorage`
 * here, where the original fails to enslave the device twice); the default route via
 * `cluster.networks.upstream.gateway` on the bridge holding an address of the gateway's network.
 * With `address: None` on upstream and no other address there, no default route (the original's
 * `ip route add` fails silently then). Empty when networking is disabled. Pure.
 */
export function planHostInterfaces(config: Config): HostInterfacePlan {
  const net = config.system.configuration.networking;
  if (!config.functions.enable_networking || net === undefined) return { bridges: [], notes: [], problems: [] };
  const notes: PlanNote[] = [];
  const problems: HostNetworkProblem[] = [];
  const bridges = bridgesOf(net, notes);
  const route = routeOf(config, bridges, notes, problems);
  return { bridges, route, notes, problems };
}
