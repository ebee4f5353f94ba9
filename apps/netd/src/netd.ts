/**
 * netd's service object for issue 3: network statistics and the client-network count for
 * keepalives, and the primary role. Host networking, client networks, dnsmasq, nftables, floating
 * IPs and the other primary duties come in later issues.
 */
import type { Logger } from '@pvc/runtime';
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
}

/** netd's work: sampler and watch running until shutdown, answers for the gRPC handlers. */
export class Netd {
  constructor(private readonly deps: NetdDeps) {}

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
   * Runs until `signal` aborts; then drops the primary duties (if held) and stops the watch.
   * The original writes `network_stats = {}` at shutdown; that key is keepaliled's to write now.
   */
  async run(signal: AbortSignal): Promise<void> {
    this.deps.networks.start();
    try {
      await this.deps.sampler.run(signal);
    } finally {
      this.deps.networks.stop();
      await this.deps.role.set(false, 'shutdown').catch((err: unknown) => {
        this.deps.logger.error({ err: String(err) }, 'primary duties did not stop cleanly at shutdown');
      });
    }
  }
}
