/**
 * netd hands dnsmasq its stored leases for the lease hook's `init` (pvc-inventory §7.2): written to
 * `init-leases-<vni>` just before each start, from netd's own Zookeeper session, so the hook's
 * `init` — which dnsmasq waits for before it serves — is a `cat`, not a Node start with a fresh
 * Zookeeper session (~0.7 s measured on the test cluster). When netd cannot read or write them,
 * the file is removed and the variable not set: the hook then reads Zookeeper itself, as before.
 */
import { describeError, type Logger } from '@pvc/runtime';
import { HOOK_ENV } from './dnsmasq-args.js';
import type { DnsmasqHost } from './host-files.js';
import type { DnsmasqLayout } from './layout.js';
import type { InitLeases } from './lease-store.js';

/** Reads the network's stored leases in `init` form (`initLeases` of lease-store, bound to netd's session). */
export type InitLeasesSource = () => Promise<InitLeases>;

/**
 * Writes the `init` file for the coming start and returns the environment that names it; `{}` (and
 * no file) when `source` is absent or fails. Never throws.
 */
export async function handInitLeases(source: InitLeasesSource | undefined, host: DnsmasqHost, layout: DnsmasqLayout, log: Logger): Promise<Record<string, string>> {
  if (!source) return {};
  try {
    const r = await source();
    for (const l of r.leftOut) log.warn({ key: l.key, problem: l.problem }, 'stored lease left out of what dnsmasq is given at start');
    await host.writeInitLeases(layout, r.text);
    log.debug({ leases: r.count, file: layout.initLeasesFile }, 'stored leases handed to dnsmasq for its start');
    return { [HOOK_ENV.initLeases]: layout.initLeasesFile };
  } catch (err) {
    log.warn({ err: describeError(err) }, 'stored leases not handed to dnsmasq by netd; its lease hook reads them from Zookeeper itself');
    await host.writeInitLeases(layout, undefined).catch(() => undefined);
    return {};
  }
}
