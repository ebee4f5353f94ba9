import type { Config } from '@pvc/config';
import { clusterKeys, pair, type WritePair } from '@pvc/zk';

/**
 * The `/config` keys the primary coordinator writes from its own configuration (the original's
 * primary keepalive duty, pvc-inventory §3.1):
 * - `migration_target_selector` = `system.migration.target_selector`;
 * - `upstream_ip` = the upstream floating address **with its prefix** (e.g. `10.0.0.254/24`),
 *   only when `functions.enable_networking` is on — without networking this node manages no
 *   floating address, so it claims none (clients reading the key see it unset).
 */
export function primaryConfigKeys(config: Config): WritePair[] {
  const keys = [pair(clusterKeys.migrationTargetSelector, config.system.migration.target_selector)];
  const upstream = config.functions.enable_networking ? config.cluster.networks?.upstream.floating_ip : undefined;
  if (upstream) keys.push(pair(clusterKeys.upstreamIp, upstream));
  return keys;
}
