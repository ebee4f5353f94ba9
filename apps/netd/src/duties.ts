/**
 * netd's primary-only duties, started in this order on takeover and stopped in reverse on
 * relinquish. NONE IS IMPLEMENTED YET: the list is empty, so SetPrimary only switches the role.
 * Planned (pvc-inventory §4.1/§4.2), each a {@link PrimaryDuty} added here by its issue:
 * upstream floating IP, cluster and storage floating IPs, metadata IP on lo, managed-network
 * gateway IPs, metadata API, dnsmasq per managed network, DNS aggregator.
 */
import type { PrimaryDuty } from '@pvc/rpc';

/** Builds netd's duty list (empty for now). */
export function netdPrimaryDuties(): PrimaryDuty[] {
  return [];
}
