import { join } from 'node:path';

/** The services that run on every node, each owning one kind of resource. */
export const SERVICES = ['supervisor', 'netd', 'vmd', 'cephd', 'keepaliled'] as const;
export type ServiceName = (typeof SERVICES)[number];

/** Sockets live in `<dynamic_directory>/sockets`, mode 0750 (root and the pvc group only). */
export function socketDir(dynamicDirectory: string): string {
  return join(dynamicDirectory, 'sockets');
}

/** Path of a service's gRPC unix socket. */
export function socketPath(dynamicDirectory: string, service: ServiceName): string {
  return join(socketDir(dynamicDirectory), `${service}.sock`);
}

/** The gRPC target string for a unix socket path. */
export function unixTarget(path: string): string {
  return `unix://${path}`;
}

/** Default deadline for local calls: local services answer in milliseconds or are in trouble. */
export const DEFAULT_DEADLINE_MS = 2000;
