/**
 * netd's service object: network statistics and the client-network count for keepalives, the
 * primary role (floating addresses), the node's nftables ruleset (loaded at start), and the client
 * networks' devices and firewall files (following `/networks`), with their gateways and dnsmasq on
 * the primary.
 */
import type { Logger } from '@pvc/runtime';
import type { ClientNetworkFollower } from './clientnet/follower.js';
import type { Firewall } from './nft/index.js';
import type { NetworkCounter } from './network-count.js';
import type { NetStatsSampler } from './netstats.js';
import type { PrimaryRole } from '@pvc/rpc';

/** What keepaliled gets for `network_stats` and `networkscount`. */
export interface NetworkStatsAnswer {
  /** JSON text of the `network_stats` object, written to ZK as is. */
  statsJson: string;
  networkCount: number;
}

/** Dependencies of {@link Netd}, built by the composition root. */
export interface NetdDeps {
  logger: Logger;
  sampler: NetStatsSampler;
  networks: NetworkCounter;
  role: PrimaryRole;
  /** The node's nftables ruleset; absent only in tests that do not exercise it. */
  firewall?: Firewall;
  /** Client network devices and firewall files following `/networks`; absent without networking. */
  clientNetworks?: ClientNetworkFollower | undefined;
  /**
   * Without networking: removes this node's stale `networks_up` (retrying until done or `signal`
   * aborts; never rejects), so placement treats the node's networks as unknown.
   */
  clearNetworksUp?: ((signal: AbortSignal) => Promise<void>) | undefined;
}

/** netd's work: sampler and watch running until shutdown, answers for the gRPC handlers. */
export class Netd {
  constructor(private readonly deps: NetdDeps) {}

  /** The node's firewall (reload it after changing a rule file). */
  get firewall(): Firewall | undefined {
    return this.deps.firewall;
  }

  /** The role state machine (its current state is also logged on every transition). */
  get role(): PrimaryRole {
    return this.deps.role;
  }

  getNetworkStats(): NetworkStatsAnswer {
    return { statsJson: JSON.stringify(this.deps.sampler.snapshot()), networkCount: this.deps.networks.value };
  }

  /** Switches the primary-only duties; resolves with whether we are primary afterwards. */
  setPrimary(primary: boolean, reason: string): Promise<boolean> {
    return this.deps.role.set(primary, reason);
  }

  /**
   * Loads the firewall first (as the original, before its watches; a failure is logged and netd
   * goes on), then runs until `signal` aborts; then stops the watch, waits for a firewall reload in
   * progress, and drops the primary duties (if held).
   * The original writes `network_stats = {}` at shutdown; that key is keepaliled's to write now.
   */
  async run(signal: AbortSignal): Promise<void> {
    await this.deps.firewall?.start(signal);
    this.deps.networks.start();
    this.deps.clientNetworks?.start(signal);
    const clearing = this.deps.clearNetworksUp?.(signal);
    try {
      await this.deps.sampler.run(signal);
    } finally {
      await clearing;
      this.deps.networks.stop();
      await this.deps.clientNetworks?.stop();
      await this.deps.firewall?.idle();
      await this.deps.role.set(false, 'shutdown').catch((err: unknown) => {
        this.deps.logger.error({ err: String(err) }, 'primary duties did not stop cleanly at shutdown');
      });
    }
  }
}
