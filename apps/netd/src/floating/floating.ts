/**
 * The primary's floating addresses (pvc-inventory §4.1 phases C and D, §4.2): upstream first,
 * then cluster and storage, each on the bridge of its network (`brupstream`, `brcluster`,
 * `brstorage`, or the bridge of an earlier network sharing its device, as libs/hostnet sets them
 * up). They are netd's primary duties: added on takeover, removed on relinquish and at shutdown.
 *
 * - A start adds the address and returns; the gratuitous ARP (`announce`) runs after it without
 *   holding up the handover, and its failure is only logged (the neighbours learn the new MAC on
 *   their next ARP instead).
 * - A stop removes the address; one not there counts as removed.
 * - netd starts secondary: {@link removeLeftovers} removes floating addresses left on the bridges
 *   by an earlier netd (a crash while primary). If this node is still primary, keepaliled asks for
 *   the duties again within an interval (it re-asserts them while primary).
 *
 * @module
 */
import type { Config, NetworkName } from '@pvc/config';
import { planHostInterfaces } from '@pvc/hostnet';
import { describeError, type Logger } from '@pvc/runtime';
import type { PrimaryDuty } from '@pvc/rpc';
import { AddressError, ipOf, type AddressPort } from './address-port.js';

/** One floating address and where it goes. */
export interface FloatingAddress {
  readonly network: NetworkName;
  /** `a.b.c.d/len` (`cluster.networks.<network>.floating_ip`). */
  readonly cidr: string;
  readonly bridge: string;
}

/** Takeover order of the original: upstream (phase C), then cluster and storage (phase D). */
const ORDER: readonly NetworkName[] = ['upstream', 'cluster', 'storage'];

/**
 * The floating addresses of this node's config, in takeover order. None when networking is
 * disabled or the cluster networks are not configured (then netd has no floating duty).
 */
export function floatingAddresses(config: Config): FloatingAddress[] {
  const nets = config.cluster.networks;
  const mine = config.system.configuration.networking;
  if (!config.functions.enable_networking || !nets || !mine) return [];
  const bridges = planHostInterfaces(config).bridges;
  return ORDER.flatMap((network) => {
    const bridge = bridges.find((b) => b.device === mine[network].device)?.bridge;
    return bridge ? [{ network, cidr: nets[network].floating_ip, bridge }] : [];
  });
}

/** Dependencies of the floating duties. */
export interface FloatingDeps {
  addresses: AddressPort;
  logger: Logger;
}

/** One {@link PrimaryDuty} per floating address (`floating-ip-upstream`, …), in takeover order. */
export function floatingDuties(list: readonly FloatingAddress[], d: FloatingDeps): PrimaryDuty[] {
  return list.map((f) => ({
    name: `floating-ip-${f.network}`,
    start: async () => {
      await d.addresses.add(f.cidr, f.bridge);
      d.logger.info({ network: f.network, address: f.cidr, bridge: f.bridge }, 'floating address added');
      void d.addresses.announce(ipOf(f.cidr), f.bridge).catch((err: unknown) =>
        d.logger.warn({ network: f.network, address: f.cidr, bridge: f.bridge, err: describeError(err) }, 'gratuitous ARP for the floating address not sent'));
    },
    stop: async () => {
      await d.addresses.remove(f.cidr, f.bridge);
      d.logger.info({ network: f.network, address: f.cidr, bridge: f.bridge }, 'floating address removed');
    },
  }));
}

/**
 * Removes floating addresses found on their bridges while this netd is secondary (at start).
 * A bridge that does not exist (yet) has none. Failures are logged and returned, never thrown.
 */
export async function removeLeftovers(list: readonly FloatingAddress[], d: FloatingDeps): Promise<string[]> {
  const failed: string[] = [];
  for (const f of list) {
    try {
      const present = await d.addresses.list(f.bridge).catch((err: unknown) => {
        if (err instanceof AddressError && err.code === 'ADDRESS_NO_DEVICE') return [];
        throw err;
      });
      if (!present.some((c) => ipOf(c) === ipOf(f.cidr))) continue;
      await d.addresses.remove(f.cidr, f.bridge);
      d.logger.warn({ network: f.network, address: f.cidr, bridge: f.bridge }, 'removed a floating address left from before (netd starts secondary; the primary asks again)');
    } catch (err) {
      failed.push(`${f.network} ${f.cidr} on ${f.bridge}: ${describeError(err)}`);
      d.logger.error({ network: f.network, address: f.cidr, bridge: f.bridge, err: describeError(err) }, 'could not remove a floating address left from before');
    }
  }
  return failed;
}
