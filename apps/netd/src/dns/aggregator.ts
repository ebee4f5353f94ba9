/**
 * The DNS aggregator on the primary (issue 16 item 2, pvc-inventory §7.3): PowerDNS with its
 * PostgreSQL backend, one zone per managed network, filled from each network's dnsmasq by AXFR.
 * It is netd's last primary duty: started after the networks' dnsmasq (handover phase G), stopped
 * first (phase B).
 *
 * A pass (level-based, one at a time): load the gpgsql schema if absent → add the `internal`
 * domains of the managed networks that lack one, remove those of networks gone → make sure
 * pdns_server runs → per network: AXFR from its gateway, diff the A/AAAA records against the
 * database ({@link planZoneSync}), apply the difference with the SOA serial bumped in one
 * transaction, `pdns_control reload <domain>`. A network whose transfer fails is logged (once per
 * distinct error) and skipped until the next pass; the others go on.
 *
 * Timing: passes every `periodMs` (default 10 s, the original's). A pass that fails (database down
 * or refusing the credentials, pdns_server not starting, Zookeeper unreadable) is logged naming
 * its cause — `coordinator.dns.database` for the database — and retried after a pause that doubles
 * from `retry.firstMs` to `retry.maxMs` (default 2 s … 60 s) until one succeeds; then the period
 * resumes. Both are {@link retryUntilDone}: no hand-made loop. The duty's start only launches this
 * in the background, so a database that is down never holds up the handover or the rest of netd.
 *
 * State (logged once per transition, with its reason): `stopped` → `running` ⇄ `failing` → `stopped`.
 *
 * @module
 */
import type { PrimaryDuty } from '@pvc/rpc';
import { describeError, retryUntilDone, type Clock, type Logger, type RetryPause } from '@pvc/runtime';
import type { AxfrPort } from './axfr.js';
import type { PdnsPort } from './pdns-process.js';
import type { DnsStore } from './store.js';
import { networkZone, planDomains, planZoneSync, type AggregatedNetwork } from './zone.js';

/** The aggregator's states. */
export type AggregatorState = 'stopped' | 'running' | 'failing';

/** Default period of the sync pass (the original's 10 s). */
export const SYNC_PERIOD_MS = 10_000;

/** Dependencies of {@link DnsAggregator}. */
export interface DnsAggregatorDeps {
  readonly store: DnsStore;
  readonly axfr: AxfrPort;
  readonly pdns: PdnsPort;
  /** The managed networks with a domain and a gateway, read from Zookeeper at each pass. */
  readonly networks: (signal: AbortSignal) => Promise<readonly AggregatedNetwork[]>;
  readonly clock: Clock;
  readonly logger: Logger;
  /** `cluster.networks.upstream.domain` (SOA and default NS names). */
  readonly upstreamDomain: string;
  readonly periodMs?: number;
  readonly retry?: RetryPause;
}

/** What one pass did (tests, logs). */
export interface AggregatorPass {
  readonly domainsAdded: readonly string[];
  readonly domainsRemoved: readonly string[];
  /** Domain → new SOA serial, for the zones that changed. */
  readonly updated: ReadonlyMap<string, number>;
  /** Domain → why its transfer or update was skipped. */
  readonly skipped: ReadonlyMap<string, string>;
}

/** See the module comment. */
export class DnsAggregator {
  private current: AggregatorState = 'stopped';
  private loop: { ac: AbortController; done: Promise<void> } | undefined;
  private readonly networkErrors = new Map<string, string>();
  /** Passes that completed (tests). */
  passes = 0;
  last: AggregatorPass | undefined;

  constructor(private readonly deps: DnsAggregatorDeps) {}

  get state(): AggregatorState {
    return this.current;
  }

  /** The duty `dns-aggregator` (last in netd's list). */
  duty(): PrimaryDuty {
    return { name: 'dns-aggregator', start: () => this.start(), stop: () => this.stop('relinquish') };
  }

  /** Starts the passes in the background; resolves at once. */
  start(): Promise<void> {
    if (this.loop) return Promise.resolve();
    const ac = new AbortController();
    const { clock } = this.deps;
    const retry = this.deps.retry ?? { firstMs: 2_000, maxMs: 60_000 };
    const done = retryUntilDone(clock, this.deps.periodMs ?? SYNC_PERIOD_MS, async () => {
      await retryUntilDone(clock, retry, () => this.attempt(ac.signal), ac.signal);
      return false;
    }, ac.signal);
    this.loop = { ac, done };
    this.deps.logger.info({ periodMs: this.deps.periodMs ?? SYNC_PERIOD_MS }, 'DNS aggregator starting');
    return Promise.resolve();
  }

  /** Ends the passes (waiting for a running one), stops pdns_server, closes the database connections. */
  async stop(reason: string): Promise<void> {
    const loop = this.loop;
    this.loop = undefined;
    if (loop) {
      loop.ac.abort();
      await loop.done;
    }
    await this.deps.pdns.stop(reason);
    await this.deps.store.close();
    this.networkErrors.clear();
    this.transition('stopped', reason);
  }

  private transition(next: AggregatorState, reason: string): void {
    if (next === this.current) return;
    const level = next === 'failing' ? 'error' : 'info';
    this.deps.logger[level]({ from: this.current, to: next, reason }, `DNS aggregator ${next}`);
    this.current = next;
  }

  private async attempt(signal: AbortSignal): Promise<boolean> {
    try {
      this.last = await this.pass(signal);
      this.passes++;
      this.transition('running', 'pass done');
      return true;
    } catch (err) {
      if (signal.aborted) return true;
      const msg = describeError(err);
      this.deps.logger.error({ err: msg, code: (err as { code?: string }).code }, `DNS aggregator pass failed: ${msg}; retrying with backoff`);
      this.transition('failing', msg);
      return false;
    }
  }

  /** One pass (see the module comment). Throws on database, pdns_server and Zookeeper failures. */
  private async pass(signal: AbortSignal): Promise<AggregatorPass> {
    const { store, logger } = this.deps;
    if (await store.ensureSchema()) logger.info('PowerDNS schema loaded into coordinator.dns.database');
    const networks = await this.deps.networks(signal);
    const zones = networks.map((n) => ({ n, zone: networkZone(n, this.deps.upstreamDomain) }));
    const plan = planDomains(zones.map((z) => z.zone), await store.internalDomains());
    for (const d of plan.remove) {
      await store.removeDomain(d);
      logger.info({ domain: d }, 'DNS aggregator: domain removed (its network is gone)');
    }
    for (const z of plan.add) {
      await store.addDomain(z);
      logger.info({ domain: z.domain }, 'DNS aggregator: domain added');
    }
    await this.deps.pdns.ensureRunning(this.current === 'stopped' ? 'aggregator started' : 'not running at a pass');
    const updated = new Map<string, number>();
    const skipped = new Map<string, string>();
    for (const { n, zone } of zones) {
      if (signal.aborted) break;
      const serial = await this.syncZone(n, zone.domain, signal, skipped);
      if (serial !== undefined) updated.set(zone.domain, serial);
    }
    for (const d of [...this.networkErrors.keys()]) if (!zones.some((z) => z.zone.domain === d)) this.networkErrors.delete(d);
    return { domainsAdded: plan.add.map((z) => z.domain), domainsRemoved: plan.remove, updated, skipped };
  }

  /** Syncs one zone; returns its new serial when it changed. Only database errors are thrown. */
  private async syncZone(n: AggregatedNetwork, domain: string, signal: AbortSignal, skipped: Map<string, string>): Promise<number | undefined> {
    const log = this.deps.logger.child({ vni: n.vni, domain });
    let transferred;
    try {
      transferred = await this.deps.axfr.transfer(n.server, domain, signal);
    } catch (err) {
      const msg = describeError(err);
      skipped.set(domain, msg);
      if (this.networkErrors.get(domain) !== msg) log.warn({ err: msg }, 'DNS aggregator: zone not transferred from dnsmasq; tried again at the next pass');
      this.networkErrors.set(domain, msg);
      return undefined;
    }
    if (this.networkErrors.delete(domain)) log.info('DNS aggregator: zone transferred again');
    const stored = await this.deps.store.addressRecords(domain);
    if (stored === undefined) return undefined;
    const sync = planZoneSync(transferred, stored);
    if (!sync.changed) return undefined;
    const soa = await this.deps.store.applyZone(domain, sync);
    const serial = Number(soa?.split(/\s+/)[2]);
    log.info({ deleted: sync.deletes.length, inserted: sync.inserts.map((r) => `${r.name} ${r.type} ${r.content}`), serial }, 'DNS aggregator: zone updated');
    try {
      await this.deps.pdns.reload(domain);
    } catch (err) {
      log.warn({ err: describeError(err) }, 'DNS aggregator: PowerDNS not told to reload the zone');
    }
    return serial;
  }
}
