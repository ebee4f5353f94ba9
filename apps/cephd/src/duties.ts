/**
 * cephd's primary-only duties, started in order on takeover and stopped in reverse on relinquish
 * and at shutdown (pvc-inventory §3.1, §4.2, §8):
 *
 * - `ceph-stats` ({@link CephStatsDuty}, only with storage enabled): at takeover and then every
 *   keepalive interval, `/ceph` (`ceph status`), `/ceph/health` (`ceph health` JSON), `/ceph/util`
 *   (`ceph df`), `pools/<p>/stats` and `osds/<id>/stats`, one transaction per group, and our
 *   `/ceph/stats_state` (what is stale and why). Bounded and never overlapping; a slow or
 *   unreachable Ceph leaves the last values and marks them stale. Its start does not wait for Ceph.
 * - `storage-requests` ({@link StorageRequests}, only with storage enabled): carries out the
 *   `pvc storage` requests under `/cmd/ceph` one at a time and answers them (storage/requests.ts).
 *   Its stop takes no new request and waits up to 3 s for the one in progress (which finishes anyway).
 *
 * Not primary duties: each node's own OSD objects (`own-osds.ts`, every node) and the RBD lock
 * flush (any node, on request).
 */
import type { PrimaryDuty } from '@pvc/rpc';
import type { CephStatsDuty } from './stats/duty.js';
import type { StorageRequests } from './storage/requests.js';

/** The duties there are (absent = not on this node, e.g. storage disabled). */
export interface CephdDuties {
  stats?: CephStatsDuty | undefined;
  requests?: StorageRequests | undefined;
}

/** Builds cephd's duty list, in start order. */
export function cephdPrimaryDuties(duties: CephdDuties = {}): PrimaryDuty[] {
  return [...(duties.stats ? [duties.stats] : []), ...(duties.requests ? [duties.requests.duty()] : [])];
}
