/**
 * The client network device layer (issue 12 item 1, inventory §7.1): what the planner is given
 * (the networks wanted on this node, the node's facts, the devices observed) and what it returns
 * (the ordered changes that make the host match). Pure data; no I/O here.
 *
 * @module
 */

/** `managed` = VXLAN over the cluster device; `bridged` = 802.1Q VLAN on `bridge_device`. */
export type ClientNetType = 'managed' | 'bridged';

/** One network wanted on this node (from `/networks/<vni>`: `nettype`, `mtu`). */
export interface ClientNetwork {
  readonly vni: number;
  readonly type: ClientNetType;
  /** The `mtu` key; null when empty: the largest allowed is used, as is a larger value. */
  readonly mtu: number | null;
}

/** What the planner needs to know about this node (its configuration and the cluster's nodes). */
export interface NodeFacts {
  /** The device VXLAN packets leave by (`cluster.device`, e.g. `brcluster` or `ens4`). */
  readonly clusterDevice: string;
  readonly clusterMtu: number;
  /** `bridge_device` and `bridge_mtu`: needed for bridged networks only. */
  readonly bridgeDevice?: string | undefined;
  readonly bridgeMtu?: number | undefined;
  /** This node's cluster address: never a flooding destination of its own VXLANs. */
  readonly clusterAddress: string;
  /** The other nodes' cluster addresses (IPv4): one flooding entry each on every VXLAN. */
  readonly peers: readonly string[];
}

/** One link as observed (`ip -json -d link show`). */
export interface ObservedLink {
  readonly name: string;
  readonly index: number;
  /** `bridge`, `vxlan`, `vlan`, `veth`…; undefined for a plain physical device. */
  readonly kind?: string | undefined;
  readonly mtu: number;
  /** Administratively up. */
  readonly up: boolean;
  readonly master?: string | undefined;
  /** The link's alias (`ifalias`): {@link OWNER_ALIAS} on the devices netd created. */
  readonly alias?: string | undefined;
  /** VXLAN/VLAN id. */
  readonly id?: number | undefined;
  /** VXLAN UDP destination port. */
  readonly dstport?: number | undefined;
  /** The device a VXLAN sends by or a VLAN sits on. */
  readonly lower?: string | undefined;
}

/** The IPv6 settings of one bridge the planner keeps (`net.ipv6.conf.<bridge>.*`). */
export interface Ipv6Settings {
  readonly accept_dad?: string | undefined;
  readonly disable_ipv6?: string | undefined;
}

/** What the host has now. */
export interface ObservedDevices {
  readonly links: readonly ObservedLink[];
  /** `vxlan<vni>` → the destinations of its all-zeros (flooding) forwarding entries. */
  readonly flood: ReadonlyMap<string, readonly string[]>;
  /** `vmbr<vni>` → its IPv6 settings; undefined when the host has no IPv6 (nothing to set). */
  readonly ipv6?: ReadonlyMap<string, Ipv6Settings> | undefined;
}

/** Every planner input. */
export interface ClientNetPlanInput {
  readonly networks: readonly ClientNetwork[];
  readonly facts: NodeFacts;
  readonly observed: ObservedDevices;
}

/**
 * The alias netd gives every device it creates. Only links carrying it are ever deleted: a
 * `vmbr<n>` made by someone else (an admin, the original daemon) is used when it has the right
 * shape, and left in place when its network goes.
 */
export const OWNER_ALIAS = 'pvc-netd client network';

/** The UDP port of every VXLAN (IANA). */
export const VXLAN_PORT = 4789;
/** What VXLAN over IPv4 adds to a frame: the MTU of a managed network is at most cluster MTU − 50. */
export const VXLAN_OVERHEAD = 50;
/** The smallest MTU the kernel takes on an Ethernet device. */
export const MIN_MTU = 68;

export const bridgeOf = (vni: number): string => `vmbr${vni}`;
export const vxlanOf = (vni: number): string => `vxlan${vni}`;
export const vlanOf = (vni: number): string => `vlan${vni}`;
/** The device in the bridge: `vxlan<vni>` (managed) or `vlan<vni>` (bridged). */
export const memberOf = (n: Pick<ClientNetwork, 'vni' | 'type'>): string => (n.type === 'managed' ? vxlanOf(n.vni) : vlanOf(n.vni));

/** The VNI in a client network device name (`vmbr100`, `vxlan100`, `vlan100`), if it is one. */
export function vniOfDevice(name: string): number | undefined {
  const m = /^(?:vmbr|vxlan|vlan)([0-9]+)$/.exec(name);
  return m ? Number(m[1]) : undefined;
}

/**
 * One change to the host. Every change names its network (`vni`) and the device it acts on, so a
 * failure can be reported against both.
 */
export type DeviceAction =
  | { readonly kind: 'create-vxlan'; readonly vni: number; readonly device: string; readonly lower: string; readonly mtu: number }
  | { readonly kind: 'create-vlan'; readonly vni: number; readonly device: string; readonly lower: string; readonly mtu: number }
  | { readonly kind: 'create-bridge'; readonly vni: number; readonly device: string; readonly mtu: number }
  | { readonly kind: 'set-mtu'; readonly vni: number; readonly device: string; readonly mtu: number }
  | { readonly kind: 'set-master'; readonly vni: number; readonly device: string; readonly bridge: string }
  | { readonly kind: 'set-up'; readonly vni: number; readonly device: string }
  | { readonly kind: 'set-ipv6'; readonly vni: number; readonly device: string; readonly key: keyof Ipv6Settings; readonly value: string }
  | { readonly kind: 'flood-add'; readonly vni: number; readonly device: string; readonly dst: string }
  | { readonly kind: 'flood-del'; readonly vni: number; readonly device: string; readonly dst: string }
  | { readonly kind: 'delete'; readonly vni: number; readonly device: string; readonly why: string };

/** Why a network gets no (or no further) changes in this pass. */
export type ProblemReason = 'no-lower-device' | 'no-bridge-device' | 'bad-mtu' | 'bad-vni' | 'foreign-device';

/** A network left as it is, with the reason (logged with its VNI; the others still converge). */
export interface NetworkProblem {
  readonly vni: number;
  readonly reason: ProblemReason;
  readonly detail: string;
}

/** The planner's answer: changes in the order to apply them, and the networks it could not plan. */
export interface ClientNetPlan {
  readonly actions: readonly DeviceAction[];
  readonly problems: readonly NetworkProblem[];
}
