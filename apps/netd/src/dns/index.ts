/**
 * netd's DNS aggregator on the primary (issue 16 item 2): PowerDNS (gpgsql) serving one zone per
 * managed network, filled from the networks' dnsmasq by AXFR. See `aggregator.ts`.
 */
export { DnsAggregator, SYNC_PERIOD_MS, type AggregatorPass, type AggregatorState, type DnsAggregatorDeps } from './aggregator.js';
export { createDigAxfr, type AxfrPort, type DigAxfrOptions } from './axfr.js';
export { DnsError, type DnsErrorCode } from './errors.js';
export { PdnsProcess, type PdnsPort, type PdnsProcessDeps, type PdnsState } from './pdns-process.js';
export { createPgDnsStore, databaseError, GPGSQL_SCHEMA, type PgDnsStoreOptions } from './pg-store.js';
export { aggregatorSettings, DNS_DATABASE_KEY, FALLBACK_UPSTREAM_DOMAIN, PDNS_USER, pdnsArgs, pdnsConfigFile, type AggregatorSettings } from './settings.js';
export type { DnsStore } from './store.js';
export { aggregatedNetworks } from './networks.js';
export * from './zone.js';
