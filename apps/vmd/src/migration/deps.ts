import type { Clock, Logger } from '@pvc/runtime';
import { createLock, type KazooLock, type LockSpec, type ZkClient } from '@pvc/zk';
import type { Hypervisor } from '../host/hypervisor.js';
import type { LiveMigrator, PeerAddress } from '../host/virsh-migrate.js';

/** Timings of the handshake (the original's values by default). */
export interface MigrationTimings {
  /** Sender: waiting for the receiver and for `migrate_sync_lock` (30 s). */
  syncTimeoutMs: number;
  /** Receiver: hold of the first `migrate_sync_lock` phase (1 s). */
  holdMs: number;
  /** Sender: pause after locking state/node (0.5 s) and between live attempts (0.5 s). */
  pauseMs: number;
  /** Live attempts before the shutdown fallback (3). */
  liveAttempts: number;
  /** Bound of one `virsh migrate` (120 s). */
  liveTimeoutMs: number;
  /** Sender: waiting for the API's/others' state and node locks (60 s). */
  lockTimeoutMs: number;
}

/** The original's timings. */
export const DEFAULT_TIMINGS: MigrationTimings = {
  syncTimeoutMs: 30_000, holdMs: 1000, pauseMs: 500, liveAttempts: 3, liveTimeoutMs: 120_000, lockTimeoutMs: 60_000,
};

/** What the sender and receiver work with. */
export interface MigrationDeps {
  zk: ZkClient;
  hv: Hypervisor;
  clock: Clock;
  logger: Logger;
  /** This node's name. */
  node: string;
  migrator: LiveMigrator;
  /** Where another node's libvirtd is reached. */
  peer: (node: string) => PeerAddress;
  /** `vm_shutdown_timeout`, ms (shutdown migration). */
  shutdownTimeoutMs: number;
  timings: MigrationTimings;
}

/** A kazoo-compatible lock of the inventory, identified as this node's vmd. */
export function lockOf(d: MigrationDeps, spec: LockSpec): KazooLock {
  return createLock(d.zk, spec, { clock: d.clock, identifier: `vmd@${d.node}` });
}

/** Releases every lock, ignoring errors (they are ephemeral: session loss removes them anyway). */
export async function releaseAll(ls: readonly KazooLock[]): Promise<void> {
  await Promise.all(ls.map((l) => l.release().catch(() => false)));
}
