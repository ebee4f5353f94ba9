/**
 * netd's primary-only duties, started in this order on takeover and stopped in reverse on
 * relinquish (pvc-inventory §4.1/§4.2). Today: the floating addresses (upstream, then cluster and
 * storage; `floating/`). Planned, each a {@link PrimaryDuty} added here by its issue: metadata IP
 * on lo, managed-network gateway IPs, metadata API, dnsmasq per managed network, DNS aggregator.
 */
import type { PrimaryDuty } from '@pvc/rpc';
import { floatingDuties, type FloatingAddress, type FloatingDeps } from './floating/floating.js';

/** Builds netd's duty list. */
export function netdPrimaryDuties(floating: readonly FloatingAddress[], deps: FloatingDeps): PrimaryDuty[] {
  return [...floatingDuties(floating, deps)];
}
