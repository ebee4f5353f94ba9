/**
 * Helpers for keepaliled's core: the per-plugin keepalive log line (printed when
 * `log_keepalive_plugin_details` is on) and where the built plugins are.
 *
 * @module
 */
import { fileURLToPath } from 'node:url';
import type { PluginSummary } from './types.js';

/**
 * The directory of the shipped plugins next to this module: `src/health/plugins` under the
 * development condition (load `.ts`), `dist/health/plugins` when built (load `.js`).
 */
export const BUILTIN_PLUGIN_DIR = fileURLToPath(new URL('./plugins/', import.meta.url));

/** The original's detail line: `<name> (<runtime>s): <message> [-<delta>]`. */
export function pluginDetailLine(p: PluginSummary): string {
  return `${p.name} (${p.runtimeS.toFixed(2)}s): ${p.message} [-${p.delta}]`;
}
