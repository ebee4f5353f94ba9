/**
 * Built-in health plugin `pvcs` (our addition; the original has none such): names the local PVC
 * services keepaliled gathers figures from (vmd, netd) that are down by the keepalive's rule — no
 * figures for 2 keepalives in a row (`docs/keepaliled.md`, Keepalives). It reads keepaliled's own
 * bookkeeping through `ctx.services()` and probes nothing itself.
 *
 * Self-contained: imports types only, so the built `.js` can be copied into any plugin directory.
 */
import type { HealthPlugin, PluginResult } from '../types.js';

/** Delta while any of the services is down. */
export const SERVICE_DOWN_DELTA = 50;

const plugin: HealthPlugin = {
  name: 'pvcs',
  setup(ctx) {
    return ctx.services().length === 0 ? 'keepaliled reports no local services' : undefined;
  },
  run(ctx): PluginResult {
    const services = ctx.services();
    const down = services.filter((s) => s.down);
    const data = Object.fromEntries(services.map((s) => [s.name, { down: s.down, silentS: Math.round(s.silentForMs / 1000) }]));
    if (down.length === 0) return { delta: 0, message: 'all services answer', data };
    return {
      delta: SERVICE_DOWN_DELTA,
      message: down.map((s) => `${s.name} down (no answer for ${Math.round(s.silentForMs / 1000)} s)`).join(', '),
      data,
    };
  },
};

export default plugin;
