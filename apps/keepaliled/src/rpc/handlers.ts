import type * as grpc from '@grpc/grpc-js';
import { addRpcService, KEEPALIVED, type KeepaliveState } from '@pvc/rpc';

/** Serves pvc.keepaliled.v1.KeepalivedService from the running service's state. */
export function registerKeepalived(server: grpc.Server, state: () => KeepaliveState | undefined): void {
  addRpcService(server, KEEPALIVED, {
    getKeepaliveState: () => {
      const s = state();
      return s ? Promise.resolve(s) : Promise.reject(new Error('keepaliled is still starting'));
    },
  });
}
