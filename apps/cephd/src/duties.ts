/**
 * cephd's primary-only duties, started in order on takeover and stopped in reverse on relinquish.
 * NONE IS IMPLEMENTED YET: the list is empty, so SetPrimary only switches the role.
 * Planned (pvc-inventory §3.1/§4.2/§8), each a {@link PrimaryDuty} added here by the storage issue:
 * Ceph status/health/util writes, pool stats and OSD stats writes at every keepalive.
 */
import type { PrimaryDuty } from '@pvc/rpc';

/** Builds cephd's duty list (empty for now). */
export function cephdPrimaryDuties(): PrimaryDuty[] {
  return [];
}
