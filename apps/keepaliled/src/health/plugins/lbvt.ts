/**
 * Built-in health plugin `lbvt` (libvirt; the original's name, which is part of the fault ID
 * `NODE_PLUGIN_LBVT_<node>` and of `monitoring_plugins`): connects to
 * `system.configuration.hypervisor.libvirt_uri` with `virsh -c <uri> version`; 50 when that fails
 * (the original always used `qemu+tcp://<node>/system`). Loaded only where
 * `functions.enable_hypervisor` is on.
 *
 * Self-contained: imports types only.
 */
import type { HealthPlugin, PluginContext, PluginResult } from '../types.js';

/** Delta when libvirt cannot be reached. */
export const LIBVIRT_DOWN_DELTA = 50;
/** Bound of one `virsh` call, ms. */
export const VIRSH_TIMEOUT_MS = 5_000;

/** `Running hypervisor: QEMU 7.2.0` → `QEMU 7.2.0`; undefined when absent. */
export function runningHypervisor(stdout: string): string | undefined {
  return /^Running hypervisor:\s*(.+)$/m.exec(stdout)?.[1]?.trim();
}

/** The last non-empty line of virsh's error output, without the `error: ` prefix. */
export function virshError(stderr: string): string {
  const lines = stderr.split('\n').map((l) => l.replace(/^error:\s*/, '').trim()).filter((l) => l !== '');
  return lines.at(-1) ?? 'no error text';
}

async function setup(ctx: PluginContext): Promise<string | undefined> {
  if (!ctx.config.functions.enable_hypervisor) return 'functions.enable_hypervisor is off';
  try {
    const r = await ctx.exec('virsh', ['--version'], { timeoutMs: VIRSH_TIMEOUT_MS });
    if (r.exitCode !== 0) return `virsh not usable (exit ${r.exitCode})`;
  } catch (err) {
    return `virsh not installed (${err instanceof Error ? err.message : String(err)})`;
  }
  return undefined;
}

async function run(ctx: PluginContext): Promise<PluginResult> {
  const uri = ctx.config.system.configuration.hypervisor.libvirt_uri;
  let reason: string;
  try {
    const r = await ctx.exec('virsh', ['-c', uri, 'version'], { timeoutMs: VIRSH_TIMEOUT_MS });
    const hv = runningHypervisor(r.stdout);
    if (r.exitCode === 0 && hv !== undefined) {
      return { delta: 0, message: `libvirt at ${uri} answers (${hv})`, data: { uri, hypervisor: hv } };
    }
    reason = r.exitCode === 0 ? 'no "Running hypervisor" line in virsh version output' : virshError(r.stderr);
  } catch (err) {
    reason = err instanceof Error ? err.message : String(err);
  }
  return { delta: LIBVIRT_DOWN_DELTA, message: `cannot connect to libvirt at ${uri}: ${reason}`, data: { uri, error: reason } };
}

const plugin: HealthPlugin = { name: 'lbvt', setup, run };
export default plugin;
