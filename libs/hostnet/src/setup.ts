import type { Config } from '@pvc/config';
import type { Logger } from '@pvc/runtime';
import { configureHostInterfaces, type InterfaceStep } from './interfaces.js';
import { applySysctls, planSysctls, type SysctlResult } from './sysctl.js';
import type { SysctlPort } from './sysctl-port.js';

/** What {@link setupHostNetworking} did. */
export interface HostNetworkingResult {
  /** The interface plan, logged but not applied (not implemented yet). */
  readonly interfaces: readonly InterfaceStep[];
  readonly sysctls: readonly SysctlResult[];
}

/**
 * Start-up steps 4 and 5 of the original: host interfaces (logged only, see
 * {@link configureHostInterfaces}), then the sysctls (applied). Nothing happens when
 * `functions.enable_networking` is false.
 */
export async function setupHostNetworking(config: Config, sysctl: SysctlPort, logger: Logger): Promise<HostNetworkingResult> {
  if (!config.functions.enable_networking) {
    logger.info('networking disabled: host interfaces and sysctls left alone');
    return { interfaces: [], sysctls: [] };
  }
  const interfaces = configureHostInterfaces(config, logger);
  const sysctls = await applySysctls(sysctl, planSysctls(config), logger);
  return { interfaces, sysctls };
}
