import { chmod, mkdir, rm, stat } from 'node:fs/promises';
import { connect } from 'node:net';
import { dirname } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import type { Logger } from '@pvc/runtime';
import { HealthImplementation } from 'grpc-health-check';
import { RpcBindError } from './errors.js';
import { addStatusService, type ServiceState, type ServiceStatus } from './status.js';
import { unixTarget } from './sockets.js';

/** Socket file mode: owner and group may connect, nobody else (never world-writable). */
export const SOCKET_MODE = 0o660;
/** Socket directory mode. */
export const SOCKET_DIR_MODE = 0o750;

export interface LocalServerOptions {
  service: string;
  node: string;
  version: string;
  socketPath: string;
  logger: Logger;
  /** Adds the service's own gRPC services (handlers translate messages to domain calls only). */
  register?: (server: grpc.Server) => void;
  /** Monotonic-ish time source for uptime; defaults to process.uptime. */
  uptimeSeconds?: () => number;
}

/** A running local gRPC server with health and status. */
export interface LocalServer {
  readonly socketPath: string;
  setState(state: ServiceState): void;
  close(): Promise<void>;
}

async function socketInUse(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect(path);
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
  });
}

/** Removes a stale socket left by a crashed process; refuses when a live process still listens. */
async function prepareSocket(path: string, service: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: SOCKET_DIR_MODE });
  const existing = await stat(path).catch(() => undefined);
  if (!existing) return;
  if (await socketInUse(path)) throw new RpcBindError(`${service}: socket ${path} is in use (is ${service} already running?)`);
  await rm(path, { force: true });
}

function bind(server: grpc.Server, path: string, service: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.bindAsync(unixTarget(path), grpc.ServerCredentials.createInsecure(), (err) => {
      if (err) reject(new RpcBindError(`${service}: cannot listen on ${path}: ${err.message}`, err));
      else resolve();
    });
  });
}

/**
 * Starts the service's gRPC server on its unix socket (mode 0660; nothing listens on an IP address),
 * with grpc.health.v1 and pvc.common.v1.StatusService. Health is NOT_SERVING until state is running.
 */
export async function startLocalServer(opts: LocalServerOptions): Promise<LocalServer> {
  await prepareSocket(opts.socketPath, opts.service);
  const server = new grpc.Server();
  const health = new HealthImplementation({ '': 'NOT_SERVING', [opts.service]: 'NOT_SERVING' });
  health.addToServer(server);
  let state: ServiceState = 'starting';
  const uptime = opts.uptimeSeconds ?? (() => process.uptime());
  const current = (): ServiceStatus => ({
    service: opts.service,
    node: opts.node,
    version: opts.version,
    state,
    uptimeSeconds: uptime(),
    pid: process.pid,
  });
  addStatusService(server, current);
  opts.register?.(server);
  await bind(server, opts.socketPath, opts.service);
  await chmod(opts.socketPath, SOCKET_MODE);
  opts.logger.info({ socket: opts.socketPath }, 'gRPC listening');
  return {
    socketPath: opts.socketPath,
    setState(next) {
      state = next;
      const serving = next === 'running' ? 'SERVING' : 'NOT_SERVING';
      health.setStatus('', serving);
      health.setStatus(opts.service, serving);
    },
    async close() {
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
      await rm(opts.socketPath, { force: true });
    },
  };
}
