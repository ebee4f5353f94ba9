import { CEPHD, rpcClient, socketPath, unixTarget, type RbdHeldLock } from '@pvc/rpc';

/**
 * What cephd reports for one flush: images whose stale locks are gone, those it could not free
 * (`"<image>: <reason>"`), and the locks held from another address among them.
 */
export interface RbdFlushResult {
  flushed: string[];
  failed: string[];
  /** Locks another node holds: the start must be refused (a live writer must never be broken). */
  held: RbdHeldLock[];
}

/**
 * The port vmd uses to clear a VM's RBD locks before starting it (inventory §5.3: the original's
 * start_vm frees the locks held by this node's storage IP, and refuses the start when another
 * owner holds one). The work itself is cephd's (`CephdService.FlushLocks`, mode `OWN_STALE`).
 */
export interface RbdLocks {
  /** Frees this node's stale locks on `images` (`pool/volume`); throws when cephd cannot be asked. */
  flush(images: readonly string[], opts: { deadlineMs: number; signal?: AbortSignal }): Promise<RbdFlushResult>;
  /** Closes the connection. */
  close(): void;
}

/** The real {@link RbdLocks}: cephd's gRPC API on its unix socket under `dynamicDirectory`. */
export function cephdRbdLocks(dynamicDirectory: string): RbdLocks {
  const client = rpcClient(unixTarget(socketPath(dynamicDirectory, 'cephd')), CEPHD);
  return {
    flush: (images, opts) => client.flushLocks({ images: [...images], mode: 'FLUSH_MODE_OWN_STALE', deadNode: '' }, opts),
    close: () => client.close(),
  };
}
