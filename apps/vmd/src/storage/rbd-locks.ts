import { CEPHD, rpcClient, socketPath, unixTarget } from '@pvc/rpc';

/** What cephd reports for one flush: images whose stale locks are gone, and those it could not free. */
export interface RbdFlushResult {
  flushed: string[];
  failed: string[];
}

/**
 * The port vmd uses to clear a VM's RBD locks before starting it (inventory §5.3: the original's
 * start_vm frees the locks held by this node's storage IP, and refuses the start when another
 * owner holds one). The work itself is cephd's (`CephdService.FlushLocks`).
 */
export interface RbdLocks {
  /** Flushes the locks of `images` (`pool/volume`); throws when cephd cannot be asked. */
  flush(images: readonly string[], opts: { deadlineMs: number; signal?: AbortSignal }): Promise<RbdFlushResult>;
  /** Closes the connection. */
  close(): void;
}

/** The real {@link RbdLocks}: cephd's gRPC API on its unix socket under `dynamicDirectory`. */
export function cephdRbdLocks(dynamicDirectory: string): RbdLocks {
  const client = rpcClient(unixTarget(socketPath(dynamicDirectory, 'cephd')), CEPHD);
  return {
    flush: (images, opts) => client.flushLocks({ images: [...images] }, opts),
    close: () => client.close(),
  };
}
