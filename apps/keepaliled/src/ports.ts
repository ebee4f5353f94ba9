/**
 * keepaliled's ports: every side effect outside ZK and IPMI goes through one of these, with a real
 * adapter under `host/` and fakes in the simulator.
 *
 * @module
 */
import type { NodeResources } from '@pvc/rpc';

/** Options of a call to a local peer service: always bounded. */
export interface PeerCallOptions {
  deadlineMs: number;
  signal?: AbortSignal;
}

/** The node's own services, reached over their unix sockets (vmd, netd, cephd). */
export interface Peers {
  /** vmd: what runs here. */
  resources(opts: PeerCallOptions): Promise<NodeResources>;
  /** netd: network stats JSON and client network count. */
  networkStats(opts: PeerCallOptions): Promise<{ statsJson: string; networkCount: number }>;
  /** cephd: storage figures. */
  storageStats(opts: PeerCallOptions): Promise<{ enabled: boolean; osdCount: number }>;
  /** vmd: destroy every VM here at once (before a self-reset). */
  stopAllVms(reason: string, opts: PeerCallOptions): Promise<{ stopped: string[]; failed: string[] }>;
  /** netd and cephd: switch the primary-only duties on or off; resolves when both have done so. */
  setPrimaryDuties(on: boolean, reason: string, opts: PeerCallOptions): Promise<void>;
  /** cephd: clear every lock on these RBD images (`pool/volume`). */
  flushRbdLocks(images: readonly string[], opts: PeerCallOptions): Promise<{ flushed: string[]; failed: string[] }>;
}

/** Memory of this host, MiB (psutil's total / used / available). */
export interface MemoryFigures {
  totalMiB: number;
  usedMiB: number;
  freeMiB: number;
}

/** Figures keepaliled reads from its own host. */
export interface HostStats {
  memory(): Promise<MemoryFigures>;
  /** 1-minute load average. */
  load1(): Promise<number>;
}

/** How a node that has been cut off resets itself (suicide). */
export interface SelfReset {
  /** Resets the host now. May never resolve (the machine goes down). */
  reset(reason: string): Promise<void>;
}
