/**
 * Node health plugins (the original's pvchealthd, inside keepaliled): the plugin interface, the
 * loader and the monitor. See `docs/health-plugins.md`.
 *
 * @module
 */
export { createHealthMonitor } from './monitor.js';
export type { HealthMonitor, HealthMonitorDeps, MonitorState } from './monitor.js';
export type {
  HealthPlugin,
  HealthSummary,
  PluginBmc,
  PluginContext,
  PluginExecResult,
  PluginLogger,
  PluginResult,
  PluginServiceState,
  PluginSummary,
} from './types.js';
export { DEFAULT_PLUGIN_EXTENSIONS, PLUGIN_NAME_RE, loadPluginFiles } from './loader.js';
export type { LoadedPlugin, LoadProblem } from './loader.js';
export { realHostPorts } from './context.js';
export type { HostPorts } from './context.js';
export { PLUGIN_FAILURE_DELTA } from './result.js';
export { pluginDetailLine, BUILTIN_PLUGIN_DIR } from './details.js';
