/**
 * netd's gRPC handlers: translate messages to {@link Netd} calls, nothing more. The service object
 * is built once the config is loaded (after the socket opens), so calls in that instant are refused
 * with a retryable NOT_READY error.
 */
import { addRpcService, NETD, PRIMARY_ROLE } from '@pvc/rpc';
import { PvcError } from '@pvc/runtime';
import type { Netd } from '../netd.js';

/** The gRPC server serviceMain hands to `register`. */
type RpcServer = Parameters<typeof addRpcService>[0];

function ready(get: () => Netd | undefined): Netd {
  const netd = get();
  if (!netd) throw new PvcError('NOT_READY', 'netd is still starting', { retryable: true });
  return netd;
}

/** Adds NetdService and PrimaryRoleService to `server`, served by whatever `get()` returns. */
export function registerNetdRpc(server: RpcServer, get: () => Netd | undefined): void {
  addRpcService(server, NETD, {
    getNetworkStats: async () => ready(get).getNetworkStats(),
  });
  addRpcService(server, PRIMARY_ROLE, {
    setPrimary: async (req) => ({ primary: await ready(get).setPrimary(req.primary, req.reason) }),
  });
}
