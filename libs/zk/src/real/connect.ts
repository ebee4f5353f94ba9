import type { Clock, Logger } from '@pvc/runtime';
import { ZkClientCore } from '../core/client.js';
import { ZkError } from '../errors.js';
import type { OpOptions } from '../types.js';
import { NodeSession, type SessionCredentials } from './node-session.js';

/** Default client port of Zookeeper (kazoo's default as well). */
export const DEFAULT_ZK_PORT = 2181;

/**
 * Builds a connection string from the coordinator list: `host:port` pairs joined by commas.
 * Hosts that already carry a port (`h:2182`, `[::1]:2181`) keep it. Unlike the original (which
 * parses `database.zookeeper.port` and then ignores it), the port IS used.
 */
export function connectionString(hosts: readonly string[], port: number = DEFAULT_ZK_PORT, chroot?: string): string {
  if (hosts.length === 0) throw new ZkError('BAD_ARGUMENTS', 'no Zookeeper hosts given');
  const pairs = hosts.map((h) => (/:\d+$/.test(h) && (!h.includes('::') || h.startsWith('[')) ? h : `${h}:${port}`));
  return pairs.join(',') + (chroot ?? '');
}

/** Options of {@link connectZk}. */
export interface ConnectOptions {
  /** Coordinator host names or addresses. */
  hosts: readonly string[];
  port?: number;
  /** Requested session timeout (the server clamps it to its min/max); default 10 000 ms like kazoo. */
  sessionTimeoutMs?: number;
  /** Default deadline of every call; default 10 000 ms. */
  opTimeoutMs?: number;
  /** Max random pause between reconnection rounds; default 500 ms. */
  spinDelayMs?: number;
  /**
   * A server silent this long is left for another (the session is kept); default
   * min(2/3 of the session timeout, READ_TIMEOUT_CAP_MS = 2 s). See `read-timeout.ts`.
   */
  readTimeoutMs?: number;
  /** See the session manager: declare expiry ourselves after a session timeout without connection. */
  localExpiry?: boolean;
  clock: Clock;
  logger?: Logger;
}

/** The real client: a {@link ZkClientCore} over node-zookeeper-client. */
export class RealZkClient extends ZkClientCore {
  readonly connectionString: string;

  constructor(opts: ConnectOptions) {
    const cs = connectionString(opts.hosts, opts.port);
    const sessionOpts = {
      connectionString: cs,
      sessionTimeoutMs: opts.sessionTimeoutMs ?? 10_000,
      spinDelayMs: opts.spinDelayMs ?? 500,
      readTimeoutMs: opts.readTimeoutMs,
      clock: opts.clock,
    };
    super((listener) => new NodeSession(sessionOpts, listener), {
      clock: opts.clock,
      logger: opts.logger,
      opTimeoutMs: opts.opTimeoutMs,
      localExpiry: opts.localExpiry,
    });
    this.connectionString = cs;
  }

  /** Current session id and password (tests use them to force a server-side expiry). */
  sessionCredentials(): SessionCredentials | undefined {
    const h = this.currentHandle();
    return h instanceof NodeSession ? h.credentials() : undefined;
  }
}

/**
 * Connects to Zookeeper and waits for the first session (deadline `connect.timeoutMs`, default
 * the session timeout). On failure the client is closed and the error (OPERATION_TIMEOUT or
 * ABORTED) is thrown; afterwards reconnection and session re-creation are automatic.
 */
export async function connectZk(opts: ConnectOptions, connect: OpOptions = {}): Promise<RealZkClient> {
  const client = new RealZkClient(opts);
  try {
    await client.waitConnected({ timeoutMs: connect.timeoutMs ?? opts.sessionTimeoutMs ?? 10_000, signal: connect.signal });
  } catch (err) {
    await client.close();
    throw err;
  }
  return client;
}
