/** The aggregator's view of the stored networks (decoded by `@pvc/zk`). Pure. */
import type { ClientNetwork as StoredNetwork } from '@pvc/zk';
import type { AggregatedNetwork } from './zone.js';

/**
 * The managed networks with a domain and a gateway, each with the address its dnsmasq answers
 * AXFR on: the address our dnsmasq listens on (`dhcp/dnsmasq-args.ts`), the IPv6 gateway when
 * DHCPv6 is on, else the IPv4 one. (The original took the IPv4 gateway whenever there was one,
 * where its dnsmasq did not listen when DHCPv6 was on **[bug?]**.)
 */
export function aggregatedNetworks(networks: readonly StoredNetwork[]): AggregatedNetwork[] {
  return networks.flatMap((n) => {
    const server = n.ip6.dhcp ? n.ip6.gateway : n.ip4.gateway;
    if (n.type !== 'managed' || !n.domain || !server) return [];
    return [{ vni: n.vni, domain: n.domain, server, nameServers: n.nameServers }];
  });
}
