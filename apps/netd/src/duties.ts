/**
 * netd's primary-only duties, started in this order on takeover and stopped in reverse on
 * relinquish (pvc-inventory §4.1/§4.2). Today: the floating addresses (upstream, then cluster and
 * storage; `floating/`), then `client-networks` (the managed networks' gateways and dnsmasq,
 * `clientnet/primary.ts`, kept by the client network follower), and last the DNS aggregator
 * (`dns/aggregator.ts`: started after dnsmasq, stopped first, as the original's phases G and B).
 * Planned, each a {@link PrimaryDuty} added here by its issue: metadata IP on lo, metadata API.
 */
import type { PrimaryDuty } from '@pvc/rpc';
import type { ClientNetworkFollower } from './clientnet/follower.js';
import { floatingDuties, type FloatingAddress, type FloatingDeps } from './floating/floating.js';

/** Builds netd's duty list. */
export function netdPrimaryDuties(floating: readonly FloatingAddress[], deps: FloatingDeps, clientNetworks?: ClientNetworkFollower, dnsAggregator?: PrimaryDuty): PrimaryDuty[] {
  const networks: PrimaryDuty[] = clientNetworks
    ? [{ name: 'client-networks', start: () => clientNetworks.setPrimary(true, 'takeover'), stop: () => clientNetworks.setPrimary(false, 'relinquish') }]
    : [];
  return [...floatingDuties(floating, deps), ...networks, ...(dnsAggregator ? [dnsAggregator] : [])];
}
