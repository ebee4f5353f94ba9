import type { Config } from '@pvc/config';
import type { Clock, Logger } from '@pvc/runtime';
import { planHostInterfaces } from './interfaces.js';
import { applyHostInterfaces, type HostInterfacesResult } from './interfaces-apply.js';
import type { LinkPort } from './link-port.js';
import { applySysctls, planSysctls, type SysctlResult } from './sysctl.js';
import type { SysctlPort } from './sysctl-port.js';

/** What host networking acts through. */
export interface HostNetworkDeps {
  readonly sysctl: SysctlPort;
  readonly links: LinkPort;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly signal?: AbortSignal | undefined;
}

/** What {@link setupHostNetworking} did. */
export interface HostNetworkingResult {
  readonly interfaces: HostInterfacesResult;
  readonly sysctls: readonly SysctlResult[];
}

/**
 * Start-up step "host networking is configured": the host interfaces (devices, bridges, node
 * addresses, default route — {@link applyHostInterfaces}), then the sysctls (after the bridges, so
 * theirs exist). Only what differs is changed. Throws `HostNetworkError` (naming the config key)
 * when the interfaces cannot be set up; the sysctls are then left alone. Nothing is read or
 * touched when `functions.enable_networking` is false.
 */
export async function setupHostNetworking(config: Config, d: HostNetworkDeps): Promise<HostNetworkingResult> {
  const { logger } = d;
  if (!config.functions.enable_networking) {
    logger.info('networking disabled: host interfaces and sysctls left alone');
    return { interfaces: { changes: [], unchanged: 0, extras: [] }, sysctls: [] };
  }
  const interfaces = await applyHostInterfaces(planHostInterfaces(config), d);
  const sysctls = await applySysctls(d.sysctl, planSysctls(config), logger);
  return { interfaces, sysctls };
}
