/**
 * Built-in health plugin `zkpr` (ZooKeeper; the original's name, which is part of the fault ID
 * `NODE_PLUGIN_ZKPR_<node>` and of `monitoring_plugins`): sends the `srvr` four-letter word (the
 * one ZooKeeper allows by default) to this node's ZooKeeper server at
 * `<node>:<database.zookeeper.port>`; 50 when it does not answer or is not serving (the original
 * read `/schema/version` over a full client session; a four-letter word tests the same server
 * without a session). Coordinators only.
 *
 * Self-contained: imports types only.
 */
import type { HealthPlugin, PluginContext, PluginResult } from '../types.js';

/** Delta when the local ZooKeeper server is down or not serving. */
export const ZK_DOWN_DELTA = 50;
/** Bound of the request, ms. */
export const SRVR_TIMEOUT_MS = 5_000;

/** What `srvr` tells. */
export interface SrvrInfo {
  version?: string;
  mode?: string;
  nodeCount?: number;
}

/** Parses a `srvr` reply (`Zookeeper version: …`, `Mode: follower`, `Node count: 12`). */
export function parseSrvr(reply: string): SrvrInfo {
  const field = (name: string): string | undefined => new RegExp(`^${name}:\\s*(.+)$`, 'm').exec(reply)?.[1]?.trim();
  const info: SrvrInfo = {};
  const version = field('Zookeeper version');
  if (version !== undefined) info.version = version.split(',')[0];
  const mode = field('Mode');
  if (mode !== undefined) info.mode = mode;
  const count = Number(field('Node count'));
  if (Number.isInteger(count)) info.nodeCount = count;
  return info;
}

function judge(target: string, reply: string): PluginResult {
  if (/not in the whitelist/i.test(reply)) {
    return { delta: 0, message: `ZooKeeper at ${target} answers (srvr not whitelisted: mode unknown)`, data: { target } };
  }
  if (/not currently serving requests/i.test(reply)) {
    return { delta: ZK_DOWN_DELTA, message: `ZooKeeper at ${target} is not serving requests`, data: { target } };
  }
  const info = parseSrvr(reply);
  if (info.mode === undefined) {
    const shown = reply.trim() === '' ? 'empty reply' : `unexpected reply ${JSON.stringify(reply.trim().slice(0, 80))}`;
    return { delta: ZK_DOWN_DELTA, message: `ZooKeeper at ${target}: ${shown}`, data: { target } };
  }
  return { delta: 0, message: `ZooKeeper at ${target} is serving (${info.mode})`, data: { target, ...info } };
}

async function run(ctx: PluginContext): Promise<PluginResult> {
  const port = ctx.config.database.zookeeper.port;
  const target = `${ctx.node}:${port}`;
  try {
    return judge(target, await ctx.tcpRequest(ctx.node, port, 'srvr', { timeoutMs: SRVR_TIMEOUT_MS }));
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    return { delta: ZK_DOWN_DELTA, message: `ZooKeeper at ${target} unreachable: ${reason}`, data: { target, error: reason } };
  }
}

const plugin: HealthPlugin = {
  name: 'zkpr',
  setup: (ctx) => (ctx.isCoordinator ? undefined : 'not a coordinator (no ZooKeeper server here)'),
  run,
};
export default plugin;
