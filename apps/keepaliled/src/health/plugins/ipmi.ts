/**
 * Built-in health plugin `ipmi`: asks this node's own BMC for the chassis power status (up to 3
 * tries); 10 when it cannot be reached (the original's `ipmi`). Without its BMC a node cannot be
 * fenced, so an unreachable BMC is worth knowing before it is needed.
 *
 * The BMC comes from `ctx.bmc` (keepaliled's ipmitool adapter over `system.fencing.ipmi`): the
 * plugin never sees the password. Self-contained: imports types only.
 */
import type { HealthPlugin, PluginContext, PluginResult } from '../types.js';

/** Delta when the BMC does not answer. */
export const BMC_UNREACHABLE_DELTA = 10;
/** Tries per run. */
export const TRIES = 3;
/** Bound of one try, ms (3 tries stay inside the default 14 s run bound). */
export const TRY_TIMEOUT_MS = 4_000;

async function run(ctx: PluginContext): Promise<PluginResult> {
  const bmc = ctx.bmc;
  if (bmc === undefined) return { delta: BMC_UNREACHABLE_DELTA, message: 'no BMC configured' };
  const errors: string[] = [];
  for (let i = 0; i < TRIES && !ctx.signal.aborted; i++) {
    try {
      const power = await bmc.powerStatus({ timeoutMs: TRY_TIMEOUT_MS });
      return { delta: 0, message: `BMC ${bmc.name} answers; chassis power ${power}`, data: { bmc: bmc.name, power, tries: i + 1 } };
    } catch (err) {
      errors.push(err instanceof Error ? err.message : String(err));
    }
  }
  return {
    delta: BMC_UNREACHABLE_DELTA,
    message: `BMC ${bmc.name} unreachable after ${errors.length} tries: ${errors.at(-1) ?? 'aborted'}`,
    data: { bmc: bmc.name, errors },
  };
}

const plugin: HealthPlugin = {
  name: 'ipmi',
  setup: (ctx) => (ctx.bmc === undefined ? 'no IPMI host configured (system.fencing.ipmi.host)' : undefined),
  run,
};
export default plugin;
