/**
 * cephd's gRPC handlers: translate messages to {@link Cephd} calls, nothing more. The service object
 * is built once the config is loaded (after the socket opens), so calls in that instant are refused
 * with a retryable NOT_READY error.
 */
import { addRpcService, CEPHD, PRIMARY_ROLE } from '@pvc/rpc';
import { PvcError } from '@pvc/runtime';
import type { Cephd } from '../cephd.js';

/** The gRPC server serviceMain hands to `register`. */
type RpcServer = Parameters<typeof addRpcService>[0];

function ready(get: () => Cephd | undefined): Cephd {
  const cephd = get();
  if (!cephd) throw new PvcError('NOT_READY', 'cephd is still starting', { retryable: true });
  return cephd;
}

/** Adds CephdService and PrimaryRoleService to `server`, served by whatever `get()` returns. */
export function registerCephdRpc(server: RpcServer, get: () => Cephd | undefined): void {
  addRpcService(server, CEPHD, {
    getStorageStats: async () => ready(get).getStorageStats(),
    // Only FORCE removes foreign locks; an unset mode (a caller older than the field) gets the safe one.
    flushLocks: async (req) => ready(get).flushLocks(req.images, req.mode === 'FLUSH_MODE_FORCE' ? 'force' : 'own', req.deadNode),
  });
  addRpcService(server, PRIMARY_ROLE, {
    setPrimary: async (req) => ({ primary: await ready(get).setPrimary(req.primary, req.reason) }),
  });
}
