import type * as grpc from '@grpc/grpc-js';
import { addRpcService, KEEPALIVED, type KeepaliveState } from '@pvc/rpc';
import { PvcError } from '@pvc/runtime';

/**
 * Serves pvc.keepaliled.v1.KeepalivedService from the running service's state; before there is one,
 * a retryable NOT_READY (gRPC UNAVAILABLE).
 */
export function registerKeepalived(server: grpc.Server, state: () => KeepaliveState | undefined): void {
  addRpcService(server, KEEPALIVED, {
    getKeepaliveState: () => {
      const s = state();
      return s ? Promise.resolve(s) : Promise.reject(new PvcError('NOT_READY', 'keepaliled is still starting', { retryable: true }));
    },
  });
}
