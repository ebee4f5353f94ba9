import type { LocalZkServer, ZkReach } from '../ports.js';

/** Bound of the `srvr` probe of the local server (well within every asker's bound, ≥ 1 s). */
export const LOCAL_PROBE_TIMEOUT_MS = 500;

/** What a node knows of its own reach of Zookeeper. */
export interface LocalViewDeps {
  node: string;
  /** Whether keepaliled's own ZK session is connected now. */
  sessionConnected: () => boolean;
  server: LocalZkServer;
  /** Milliseconds since this node last wrote a keepalive. */
  silentForMs: () => number;
  probeTimeoutMs?: number;
}

/**
 * This coordinator's {@link ZkReach}: what its witness answers, and how the peer check counts this
 * node itself. The session state is read after the probe, so it is the later of the two.
 */
export async function localReach(deps: LocalViewDeps, signal?: AbortSignal): Promise<ZkReach> {
  const probe = await deps.server.probe({ timeoutMs: deps.probeTimeoutMs ?? LOCAL_PROBE_TIMEOUT_MS, signal });
  return {
    node: deps.node,
    sessionConnected: deps.sessionConnected(),
    server: probe.state,
    serverDetail: probe.detail,
    msSinceKeepalive: Math.max(0, Math.round(deps.silentForMs())),
  };
}
