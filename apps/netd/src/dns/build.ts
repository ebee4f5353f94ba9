/** Builds the real DNS aggregator from the config (called by `compose.ts`). */
import type { Config } from '@pvc/config';
import { realClock, type Exec, type Logger } from '@pvc/runtime';
import { readClientNetworks, type ZkClient } from '@pvc/zk';
import { DnsAggregator } from './aggregator.js';
import { createDigAxfr } from './axfr.js';
import { aggregatedNetworks } from './networks.js';
import { PdnsProcess } from './pdns-process.js';
import { createPgDnsStore } from './pg-store.js';
import { aggregatorSettings } from './settings.js';

/** The aggregator of a coordinator with networking; undefined on other nodes (they never run it). */
export function buildDnsAggregator(config: Config, zk: ZkClient, exec: Exec, logger: Logger): DnsAggregator | undefined {
  const settings = aggregatorSettings(config);
  if (!settings) return undefined;
  const log = logger.child({ component: 'dns-aggregator' });
  return new DnsAggregator({
    store: createPgDnsStore(settings.database),
    axfr: createDigAxfr(exec),
    pdns: new PdnsProcess({ exec, clock: realClock, logger: log, settings }),
    networks: async (signal) => aggregatedNetworks((await readClientNetworks(zk, { signal })).networks),
    clock: realClock,
    logger: log,
    upstreamDomain: settings.upstreamDomain,
  });
}
