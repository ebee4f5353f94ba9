/**
 * The primary's part of the managed client networks (issue 12 item 2, inventory §7.1–§7.2): the
 * IPv4 gateway address on `vmbr<vni>` and one dnsmasq per network. {@link ClientNetworkPrimary.sync}
 * is called by every pass of the follower with the networks read from Zookeeper; while this node
 * is not primary it wants nothing, so a relinquish stops every dnsmasq and then removes the
 * gateways, and a takeover adds the gateways and then starts dnsmasq (the original's order). The
 * follower's `setPrimary` is netd's primary duty `client-networks`, after the floating addresses.
 *
 * Failures are logged once per network and retried at the next pass; a network that cannot be
 * served does not hold up the others or the handover. IPv6 gateways are not put on the bridge yet
 * (dnsmasq gets its IPv6 options from the network all the same).
 *
 * @module
 */
import { describeError, type Logger } from '@pvc/runtime';
import type { ClientNetwork as StoredNetwork } from '@pvc/zk';
import type { DnsmasqNetwork, DnsmasqProcess, Reservation } from '../dhcp/index.js';
import type { AddressPort } from '../floating/address-port.js';
import { bridgeOf } from './model.js';

/** Dependencies of {@link ClientNetworkPrimary}. */
export interface ClientNetworkPrimaryDeps {
  addresses: AddressPort;
  /** Makes the dnsmasq manager of one network (called once per VNI). */
  dnsmasq: (vni: string) => DnsmasqProcess;
  logger: Logger;
}

/** What the primary serves of one network. */
interface Served {
  /** `gateway/prefix` put on the bridge. */
  readonly gateway: string | undefined;
  readonly proc: DnsmasqProcess;
}

const prefixOf = (cidr: string): string => cidr.split('/')[1] ?? '32';

/** The dnsmasq view of a stored network. */
export function dnsmasqNetwork(n: StoredNetwork): DnsmasqNetwork {
  return {
    vni: String(n.vni),
    domain: n.domain,
    ip4Gateway: n.ip4.gateway,
    ip6Gateway: n.ip6.gateway,
    dhcp4Flag: n.ip4.dhcp,
    dhcp6Flag: n.ip6.dhcp,
    dhcp4Start: n.ip4.dhcpStart,
    dhcp4End: n.ip4.dhcpEnd,
  };
}

/** Gateways and dnsmasq of the managed networks, on the primary only. */
export class ClientNetworkPrimary {
  private readonly served = new Map<number, Served>();
  private readonly failing = new Map<number, string>();

  constructor(private readonly deps: ClientNetworkPrimaryDeps) {}

  /** VNIs served now (tests, status). */
  get vnis(): number[] {
    return [...this.served.keys()].sort((a, b) => a - b);
  }

  /**
   * Serves exactly the managed networks of `networks` when `primary`, none otherwise. Never
   * rejects. `devicesReady(vni)`: the node's `vmbr<vni>` exists (a network whose devices failed
   * is not served).
   */
  async sync(primary: boolean, networks: readonly StoredNetwork[], devicesReady: (vni: number) => boolean): Promise<void> {
    const wanted = new Map(primary ? networks.filter((n) => n.type === 'managed' && devicesReady(n.vni)).map((n) => [n.vni, n]) : []);
    // Stop first: dnsmasq, then the gateway (as the original's relinquish).
    const gone = (vni: number): boolean => !networks.some((n) => n.vni === vni);
    await Promise.all([...this.served.keys()].filter((vni) => !wanted.has(vni)).map((vni) => this.stop(vni, gone(vni))));
    await Promise.all([...wanted.values()].map((n) => this.serve(n)));
  }

  private async serve(n: StoredNetwork): Promise<void> {
    const vni = n.vni;
    const bridge = bridgeOf(vni);
    const gateway = n.ip4.gateway && n.ip4.network ? `${n.ip4.gateway}/${prefixOf(n.ip4.network)}` : undefined;
    const log = this.deps.logger.child({ vni, bridge });
    let served = this.served.get(vni);
    try {
      if (served?.gateway && served.gateway !== gateway) {
        await this.deps.addresses.remove(served.gateway, bridge);
        log.info({ address: served.gateway }, 'network gateway removed (changed)');
      }
      if (gateway && served?.gateway !== gateway) {
        await this.deps.addresses.add(gateway, bridge);
        log.info({ address: gateway }, 'network gateway added');
        void this.deps.addresses.announce(gateway.split('/')[0]!, bridge).catch((err: unknown) =>
          log.warn({ address: gateway, err: describeError(err) }, 'gratuitous ARP for the network gateway not sent'));
      }
      const proc = served?.proc ?? this.deps.dnsmasq(String(vni));
      served = { gateway, proc };
      this.served.set(vni, served);
      const reservations: Reservation[] = n.reservations.map((r) => ({ mac: r.mac, ipaddr: r.ip }));
      const wasRunning = proc.state === 'running';
      await proc.start(dnsmasqNetwork(n), reservations);
      if (!wasRunning) log.info({ pid: proc.pid }, 'dnsmasq serving the network');
      if (this.failing.delete(vni)) log.info('network served again');
    } catch (err) {
      const msg = describeError(err);
      if (this.failing.get(vni) !== msg) log.error({ err: msg }, 'cannot serve the network on the primary; retried at the next pass');
      this.failing.set(vni, msg);
    }
  }

  /**
   * Stops dnsmasq (and removes its hosts directory and pid file: nothing of a network this node
   * does not serve stays behind, on a removal or a relinquish), then removes the gateway.
   */
  private async stop(vni: number, removed: boolean): Promise<void> {
    const served = this.served.get(vni);
    if (!served) return;
    const bridge = bridgeOf(vni);
    const log = this.deps.logger.child({ vni, bridge });
    try {
      await served.proc.remove(removed ? 'network removed' : 'not primary for it any more');
      if (served.gateway) {
        await this.deps.addresses.remove(served.gateway, bridge);
        log.info({ address: served.gateway }, 'network gateway removed');
      }
      this.served.delete(vni);
      this.failing.delete(vni);
    } catch (err) {
      const msg = describeError(err);
      if (this.failing.get(vni) !== msg) log.error({ err: msg }, 'cannot stop serving the network; retried at the next pass');
      this.failing.set(vni, msg);
    }
  }
}
