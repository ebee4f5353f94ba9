/**
 * netd follows `/networks` on every node with networking (issue 12 items 1 and 3): each pass reads
 * the whole network tree through `@pvc/zk` (malformed networks are skipped and logged with their
 * key), converges this node's client network devices ({@link convergeClientNetworks}) and hands
 * the managed networks to the firewall ({@link Firewall.setNetworks}); the `vmbr<vni>` bridges up
 * afterwards go to this node's `networks_up` ({@link NetworksUpPublisher}). Passes run one at a time
 * ({@link CoalescingRunner}); they are asked for by the watches (`/networks` children, `/nodes`
 * children for the VXLAN peers, each network's ACL lists and `mtu`) and by a periodic resync, which
 * also retries what failed. Nothing here throws into netd.
 *
 * Peers (head-end replication): the other nodes' cluster addresses. With `by-id` addressing they
 * follow from their names as this node's does; with static addresses nothing in Zookeeper says
 * them, so the VXLANs get no peers (logged once; planned: an address published per node).
 *
 * @module
 */
import type { Config } from '@pvc/config';
import { resolveNodeAddress } from '@pvc/config';
import { planHostInterfaces } from '@pvc/hostnet';
import { CoalescingRunner, describeError, type Clock, type Logger } from '@pvc/runtime';
import { networkKeys, paths, readClientNetworks, watchKey, type ClientNetwork as StoredNetwork, type Unsubscribe, type ZkClient } from '@pvc/zk';
import type { Firewall } from '../nft/index.js';
import type { NetworkFirewallSpec } from '../nft/network-ruleset.js';
import { convergeClientNetworks, type ConvergeResult } from './converge.js';
import type { ClientDevicePort } from './device-port.js';
import type { ClientNetwork, NodeFacts } from './model.js';
import type { NetworksUpPublisher } from './networks-up.js';
import type { ClientNetworkPrimary } from './primary.js';

/** Default period of the resync pass, ms. */
export const RESYNC_MS = 10_000;

/** What this node knows of itself, from its config: everything of {@link NodeFacts} but the peers. */
export interface OwnFacts {
  readonly facts: Omit<NodeFacts, 'peers'>;
  /** The other nodes' cluster addresses from their names (by-id), or undefined (static addressing). */
  readonly peerAddress: ((node: string) => string | undefined) | undefined;
}

/**
 * This node's facts from its config: the bridge holding the cluster address (VXLAN packets leave
 * by it) and its MTU, the bridged networks' device, this node's cluster address. Undefined when
 * networking is off or the node has no cluster address.
 */
export function ownFacts(config: Config): OwnFacts | undefined {
  const net = config.system.configuration.networking;
  const cluster = net?.cluster.resolved;
  if (!config.functions.enable_networking || net === undefined || !cluster) return undefined;
  const plan = planHostInterfaces(config);
  const bridge = plan.bridges.find((b) => b.addresses.some((a) => a.network === 'cluster'));
  const network = config.cluster.networks?.cluster.network;
  return {
    facts: {
      clusterDevice: bridge?.bridge ?? net.cluster.device,
      clusterMtu: bridge?.mtu ?? net.cluster.mtu,
      bridgeDevice: net.bridge_device,
      bridgeMtu: net.bridge_mtu,
      clusterAddress: cluster.ip,
    },
    peerAddress: net.cluster.address.kind === 'by-id'
      ? (node) => {
          const r = resolveNodeAddress({ kind: 'by-id' }, network, node);
          return r.ok && r.value ? r.value.ip : undefined;
        }
      : undefined,
  };
}

/** The firewall's view of a stored managed network. */
export function firewallSpec(n: StoredNetwork): NetworkFirewallSpec {
  const fam = (f: { network: string | null; gateway: string | null }) => (f.network && f.gateway ? { network: f.network, gateway: f.gateway } : null);
  return { vni: n.vni, ip4: fam(n.ip4), ip6: fam(n.ip6), acls: n.acls };
}

/** Dependencies of {@link ClientNetworkFollower}. */
export interface FollowerDeps {
  zk: ZkClient;
  devices: ClientDevicePort;
  firewall?: Firewall | undefined;
  clock: Clock;
  logger: Logger;
  /** This node's name (`pvc.node`): never its own VXLAN peer. */
  node: string;
  own: OwnFacts;
  /** Resync period, ms (default {@link RESYNC_MS}). */
  resyncMs?: number;
  /** Gateways and dnsmasq while this node is primary ({@link setPrimary}); absent = not served. */
  primary?: ClientNetworkPrimary | undefined;
  /** Where the bridges up after each pass go (`networks_up`); absent = not published. */
  networksUp?: NetworksUpPublisher | undefined;
}

/** What one pass did (tests). */
export interface FollowerPass {
  readonly networks: readonly number[];
  readonly result?: ConvergeResult;
  readonly error?: string;
}

/** Keeps this node's client network devices and firewall on `/networks`. */
export class ClientNetworkFollower {
  private readonly runner = new CoalescingRunner<FollowerPass>((reasons) => this.pass(reasons));
  private readonly unsubs: Unsubscribe[] = [];
  private readonly perNetwork = new Map<string, Unsubscribe[]>();
  private nodes: readonly string[] = [];
  private isPrimary = false;
  private signal: AbortSignal | undefined;
  /** Messages logged for the current state (a problem is logged once, again only after it went away). */
  private logged = new Set<string>();
  /** Passes run (tests). */
  passes = 0;
  last: FollowerPass | undefined;

  constructor(private readonly deps: FollowerDeps) {}

  /** Starts the watches and the resync; the first pass runs at once. */
  start(signal: AbortSignal): void {
    this.signal = signal;
    const { zk, clock } = this.deps;
    if (!this.deps.own.peerAddress) {
      this.deps.logger.warn('static cluster addresses: the other nodes\' addresses are not known, so the VXLANs of client networks get no peers (by-id addressing gives them)');
    }
    this.unsubs.push(zk.watchChildren(paths.networks, (children) => {
      this.watchNetworks(children ?? []);
      void this.request('networks changed');
    }));
    this.unsubs.push(zk.watchChildren(paths.nodes, (children) => {
      this.nodes = children ?? [];
      void this.request('nodes changed');
    }));
    this.unsubs.push(clock.every(this.deps.resyncMs ?? RESYNC_MS, () => void this.request('resync'), signal));
  }

  /** Stops the watches and waits for a pass in progress. */
  async stop(): Promise<void> {
    for (const u of this.unsubs.splice(0)) u();
    for (const us of this.perNetwork.values()) for (const u of us) u();
    this.perNetwork.clear();
    await this.runner.idle();
  }

  /**
   * netd's primary duty `client-networks`: on takeover the gateways and dnsmasq of the managed
   * networks are set up by a pass; on relinquish (and at shutdown) they are taken down, even
   * without Zookeeper. Resolves when that pass is done; never rejects.
   */
  async setPrimary(on: boolean, reason: string): Promise<void> {
    this.isPrimary = on;
    await this.request(`${on ? 'takeover' : 'relinquish'}: ${reason}`);
  }

  /** Asks for a pass; resolves with the outcome of a pass that started after this call. */
  request(reason: string): Promise<FollowerPass> {
    return this.runner.request(reason);
  }

  private watchNetworks(vnis: readonly string[]): void {
    const { zk } = this.deps;
    for (const [vni, us] of this.perNetwork) {
      if (vnis.includes(vni)) continue;
      for (const u of us) u();
      this.perNetwork.delete(vni);
    }
    for (const vni of vnis) {
      if (this.perNetwork.has(vni) || !/^\d+$/.test(vni)) continue;
      const p = paths.network(vni);
      const again = (what: string) => () => void this.request(`network ${vni}: ${what}`);
      this.perNetwork.set(vni, [
        watchKey(zk, networkKeys(vni).mtu, again('mtu'), this.deps.logger),
        zk.watchChildren(p.firewallIn, again('ACLs in')),
        zk.watchChildren(p.firewallOut, again('ACLs out')),
        zk.watchChildren(p.reservations, again('DHCP reservations')),
      ]);
    }
  }

  private logOnce(next: Set<string>, key: string, log: () => void): void {
    next.add(key);
    if (!this.logged.has(key)) log();
  }

  private async pass(reasons: readonly string[]): Promise<FollowerPass> {
    this.passes++;
    const { logger } = this.deps;
    const next = new Set<string>();
    const primary = this.isPrimary;
    // Not primary: serve nothing, whatever Zookeeper says (it may be unreachable: a lost lease).
    if (!primary) await this.deps.primary?.sync(false, [], () => false);
    try {
      const tree = await readClientNetworks(this.deps.zk, { signal: this.signal });
      for (const p of tree.problems) {
        this.logOnce(next, `problem ${p.key} ${p.problem}`, () => logger.error({ vni: p.vni, key: p.key, problem: p.problem, effect: p.effect }, 'client network data in Zookeeper is not usable'));
      }
      const peers = this.peers();
      const wanted: ClientNetwork[] = tree.networks.map((n) => ({ vni: n.vni, type: n.type, mtu: n.mtu }));
      const result = await convergeClientNetworks(this.deps.devices, wanted, { ...this.deps.own.facts, peers }, {
        signal: this.signal,
        onAction: (a, line) => logger.info({ vni: a.vni, device: a.device, change: line }, 'client network device change'),
      });
      for (const f of result.failed) {
        this.logOnce(next, `failed ${f.vni} ${f.error.message}`, () => logger.error({ vni: f.vni, device: f.action.device, err: f.error.message }, 'client network change failed; retried at the next pass'));
      }
      for (const p of result.problems) {
        this.logOnce(next, `device-problem ${p.vni} ${p.reason}`, () => logger.error({ vni: p.vni, reason: p.reason, problem: p.detail }, 'client network not set up on this node'));
      }
      if (primary) {
        const broken = new Set([...result.failed.map((f) => f.vni), ...result.problems.map((p) => p.vni), ...result.skipped.map((a) => a.vni)]);
        await this.deps.primary?.sync(this.isPrimary, tree.networks, (vni) => !broken.has(vni));
      }
      await this.deps.firewall?.setNetworks(tree.networks.filter((n) => n.type === 'managed').map(firewallSpec), reasons.join(', '));
      // Last: `pvc network add --wait` returns once devices, gateway/dnsmasq and firewall are done.
      await this.deps.networksUp?.publish(result.bridgesUp, this.signal);
      this.logged = next;
      this.last = { networks: tree.networks.map((n) => n.vni), result };
      return this.last;
    } catch (err) {
      const error = describeError(err);
      this.logOnce(next, `pass ${error}`, () => logger.warn({ err: error, reasons }, 'client network pass failed; retried at the next resync'));
      this.logged = new Set([...this.logged, ...next]);
      this.last = { networks: [], error };
      return this.last;
    }
  }

  private peers(): string[] {
    const of = this.deps.own.peerAddress;
    if (!of) return [];
    const own = this.deps.own.facts.clusterAddress;
    return this.nodes.filter((n) => n !== this.deps.node).map(of).filter((ip): ip is string => ip !== undefined && ip !== own).sort();
  }
}
