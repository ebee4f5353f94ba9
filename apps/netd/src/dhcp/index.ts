/**
 * netd's DHCP/DNS server for managed networks (issue 12, item 2): one dnsmasq per network on the
 * primary, reservations as hosts files, leases in Zookeeper through the lease hook. Driven by `clientnet/primary.ts`.
 */
export { dnsmasqArgs, dnsmasqEnv, validateNetwork, HOOK_ENV, type DnsmasqNetwork, type HookZk } from './dnsmasq-args.js';
export { DnsmasqProcess, DEFAULT_DNSMASQ_TIMING, type DnsmasqProcessDeps, type DnsmasqState, type DnsmasqTiming } from './dnsmasq-process.js';
export { dnsmasqDuty, type DnsmasqWanted } from './duty.js';
export { DhcpError, type DhcpErrorCode } from './errors.js';
export { createDnsmasqHost, type DnsmasqHost } from './host-files.js';
export { defaultHookCommand, writeHookScript } from './hook-script.js';
export { bridgeOf, dnsmasqLayout, type DnsmasqDirectories, type DnsmasqLayout } from './layout.js';
export { deleteLease, initLeases, leaseKeys, listLeases, readLease, storeLease, type InitLeases, type Lease } from './lease-store.js';
export { handInitLeases, type InitLeasesSource } from './init-leases.js';
export { planReservations, syncReservations, type Reservation } from './reservations.js';
