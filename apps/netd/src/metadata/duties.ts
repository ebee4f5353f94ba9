/**
 * The metadata duties of the primary (inventory §4.1 phases E and G): `metadata-ip` adds
 * 169.254.169.254/32 on `lo` (no gratuitous ARP: guests reach it routed through their gateway on
 * the primary), `metadata-api` runs the API on it. netd starts secondary:
 * {@link removeMetadataIpLeftover} removes the address left by an earlier netd that crashed while
 * primary.
 *
 * @module
 */
import type { PrimaryDuty } from '@pvc/rpc';
import { describeError, type Logger } from '@pvc/runtime';
import { ipOf, type AddressPort } from '../floating/address-port.js';
import type { MetadataApi } from './api.js';

/** The metadata address (EC2's link-local), its prefix, and its device. */
export const METADATA_IP = '169.254.169.254';
export const METADATA_CIDR = `${METADATA_IP}/32`;
export const METADATA_DEVICE = 'lo';
export const METADATA_PORT = 80;

/** Dependencies of the address duty. */
export interface MetadataIpDeps {
  readonly addresses: AddressPort;
  readonly logger: Logger;
}

/** `metadata-ip`: the address on `lo` while primary. */
export function metadataIpDuty(d: MetadataIpDeps): PrimaryDuty {
  return {
    name: 'metadata-ip',
    start: async () => {
      await d.addresses.add(METADATA_CIDR, METADATA_DEVICE);
      d.logger.info({ address: METADATA_CIDR, device: METADATA_DEVICE }, 'metadata address added');
    },
    stop: async () => {
      await d.addresses.remove(METADATA_CIDR, METADATA_DEVICE);
      d.logger.info({ address: METADATA_CIDR, device: METADATA_DEVICE }, 'metadata address removed');
    },
  };
}

/** `metadata-api`: the API's life cycle. */
export function metadataApiDuty(api: MetadataApi): PrimaryDuty {
  return { name: 'metadata-api', start: () => api.start(), stop: () => api.stop() };
}

/** Removes the metadata address from `lo` at netd's start (secondary); failures are logged, never thrown. */
export async function removeMetadataIpLeftover(d: MetadataIpDeps): Promise<boolean> {
  try {
    const present = await d.addresses.list(METADATA_DEVICE);
    if (!present.some((c) => ipOf(c) === METADATA_IP)) return false;
    await d.addresses.remove(METADATA_CIDR, METADATA_DEVICE);
    d.logger.warn({ address: METADATA_CIDR, device: METADATA_DEVICE }, 'removed the metadata address left from before (netd starts secondary; the primary asks again)');
    return true;
  } catch (err) {
    d.logger.error({ address: METADATA_CIDR, device: METADATA_DEVICE, err: describeError(err) }, 'could not remove the metadata address left from before');
    return false;
  }
}
