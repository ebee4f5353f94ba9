/**
 * A gRPC server on one TCP address, for the few services other nodes must reach (the local
 * services use unix sockets, `server.ts`). Security rule: it listens on exactly the address it is
 * given and refuses a wildcard (`0.0.0.0`, `::`), so a service is never exposed on every interface
 * (a public one included) by accident; requests are capped small.
 *
 * @module
 */
import { isIPv6 } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import type { Logger } from '@pvc/runtime';
import { HealthImplementation } from 'grpc-health-check';
import { RpcBindError } from './errors.js';

/** Largest request a TCP server accepts (its requests are tiny; anything bigger is refused). */
export const TCP_MAX_REQUEST_BYTES = 4_096;

/** Options of {@link startTcpServer}. */
export interface TcpServerOptions {
  /** Names the server in logs, errors and grpc.health.v1 (e.g. `keepaliled-witness`). */
  service: string;
  /** The one address to listen on (an IP address or a name resolving to one); never a wildcard. */
  host: string;
  /** TCP port; 0 lets the OS choose (tests), see {@link TcpServer.port}. */
  port: number;
  logger: Logger;
  /** Adds the service's gRPC services (handlers translate messages to domain calls only). */
  register: (server: grpc.Server) => void;
}

/** A running TCP gRPC server. */
export interface TcpServer {
  /** `host:port` it listens on (IPv6 in brackets). */
  readonly address: string;
  readonly port: number;
  /** Stops at once (calls in flight are cancelled: TCP services answer reads only). */
  close(): Promise<void>;
}

/** Whether `host` is a wildcard address (every interface): `0.0.0.0`, `::`, `[::]`, empty. */
export function isWildcardAddress(host: string): boolean {
  const h = host.trim().replace(/^\[(.*)\]$/, '$1');
  if (h === '' || h === '*') return true;
  if (/^0+(\.0+){3}$/.test(h)) return true;
  return isIPv6(h) && /^[0:]+$/.test(h);
}

/** The gRPC target (or bind) string for `host:port`, IPv6 addresses in brackets. */
export function tcpTarget(host: string, port: number): string {
  return isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * Starts a gRPC server with grpc.health.v1 (SERVING) on `host:port`. Rejects with
 * {@link RpcBindError} for a wildcard host or when the address cannot be bound (not local, in use).
 */
export async function startTcpServer(opts: TcpServerOptions): Promise<TcpServer> {
  if (isWildcardAddress(opts.host)) {
    throw new RpcBindError(`${opts.service}: refusing to listen on the wildcard address "${opts.host}": it must listen on one address`);
  }
  const server = new grpc.Server({ 'grpc.max_receive_message_length': TCP_MAX_REQUEST_BYTES });
  new HealthImplementation({ '': 'SERVING', [opts.service]: 'SERVING' }).addToServer(server);
  opts.register(server);
  const target = tcpTarget(opts.host, opts.port);
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(target, grpc.ServerCredentials.createInsecure(), (err, bound) => {
      if (err) reject(new RpcBindError(`${opts.service}: cannot listen on ${target}: ${err.message}`, err));
      else resolve(bound);
    });
  });
  const address = tcpTarget(opts.host, port);
  opts.logger.info({ address }, 'gRPC listening on TCP');
  return {
    address,
    port,
    close: () => {
      server.forceShutdown();
      return Promise.resolve();
    },
  };
}
