/**
 * A network's dnsmasq as a {@link PrimaryDuty} (started in takeover phase G, stopped in relinquish
 * phase B; pvc-inventory §4.1). `current` gives the network's parameters and reservations as netd
 * last read them from Zookeeper; it is called at each start.
 */
import type { PrimaryDuty } from '@pvc/rpc';
import type { DnsmasqNetwork } from './dnsmasq-args.js';
import type { DnsmasqProcess } from './dnsmasq-process.js';
import type { Reservation } from './reservations.js';

/** What a start needs. */
export interface DnsmasqWanted {
  readonly network: DnsmasqNetwork;
  readonly reservations: readonly Reservation[];
}

/** The duty `dnsmasq-<vni>`. A failed start rejects (the manager is then stopped). */
export function dnsmasqDuty(proc: DnsmasqProcess, current: () => DnsmasqWanted): PrimaryDuty {
  return {
    name: `dnsmasq-${proc.vni}`,
    start: async () => {
      const { network, reservations } = current();
      await proc.start(network, reservations);
    },
    stop: () => proc.stop('relinquish'),
  };
}
