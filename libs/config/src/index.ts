/**
 * `@pvc/config`: `pvcnoded.yaml` → a validated, deeply frozen, typed {@link Config}.
 *
 * @packageDocumentation
 */
export { ConfigError, ConfigErrorCode, formatProblem, type ConfigProblem } from './errors.js';
export { validateConfig, parseConfig } from './validate.js';
export { loadConfig, resolveConfigPath, DEFAULT_CONFIG_PATH, CONFIG_ENV_VAR, type LoadConfigOptions } from './load.js';
export { redactedConfig, REDACTED } from './redact.js';
export {
  checkConfigMain,
  wantsCheckConfig,
  CHECK_CONFIG_FLAG,
  type CheckConfigOutput,
  type LineSink,
} from './check.js';
export { NETWORK_NAMES } from './types.js';
export { resolveNodeAddress } from './rules.js';
export type {
  Config,
  AddressSpec,
  ResolvedAddress,
  ClusterNetwork,
  DatabaseSettings,
  FenceAction,
  FencingSettings,
  MetricsSettings,
  HypervisorDomainType,
  HypervisorSettings,
  NetworkName,
  NodeNetwork,
  NodeNetworking,
  SriovDevice,
  SystemConfiguration,
  TargetSelector,
} from './types.js';
