/**
 * netd's primary-only duties, started in this order on takeover and stopped in reverse on
 * relinquish (pvc-inventory §4.1/§4.2). Today: the floating addresses (upstream, then cluster and
 * storage; `floating/`), `metadata-ip` (169.254.169.254/32 on lo, phase E) and `metadata-api`
 * (`metadata/`, phase G: before dnsmasq, stopped after it as in phase B), then `client-networks`
 * (the managed networks' gateways and dnsmasq, `clientnet/primary.ts`, kept by the client network
 * follower), and last the DNS aggregator
 * (`dns/aggregator.ts`: started after dnsmasq, stopped first, as the original's phases G and B).
 */
import type { PrimaryDuty } from '@pvc/rpc';
import type { ClientNetworkFollower } from './clientnet/follower.js';
import { floatingDuties, type FloatingAddress, type FloatingDeps } from './floating/floating.js';
import type { MetadataDuties } from './metadata/build.js';

/** Builds netd's duty list. */
export function netdPrimaryDuties(floating: readonly FloatingAddress[], deps: FloatingDeps, clientNetworks?: ClientNetworkFollower, dnsAggregator?: PrimaryDuty, metadata?: MetadataDuties): PrimaryDuty[] {
  const networks: PrimaryDuty[] = clientNetworks
    ? [{ name: 'client-networks', start: () => clientNetworks.setPrimary(true, 'takeover'), stop: () => clientNetworks.setPrimary(false, 'relinquish') }]
    : [];
  return [...floatingDuties(floating, deps), ...(metadata ? [metadata.ip, metadata.api] : []), ...networks, ...(dnsAggregator ? [dnsAggregator] : [])];
}
