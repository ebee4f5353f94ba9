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
  /** cephd: clear every lock on these RBD images (`pool/volume`); `deadNode`'s OSDs are marked down meanwhile. */
  flushRbdLocks(images: readonly string[], deadNode: string, opts: PeerCallOptions): Promise<{ flushed: string[]; failed: string[] }>;
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

/** A Zookeeper server's state by its `srvr` four-letter word (see `witness/srvr.ts`). */
export type ZkServerState = 'serving' | 'not-serving' | 'unknown';

/**
 * What a coordinator says about its own reach of Zookeeper: the suicide peer check's answer
 * (pvc.keepaliled.v1.WitnessService). No secrets.
 */
export interface ZkReach {
  /** The answering node's name. */
  node: string;
  /** Its keepaliled's ZK session is connected. */
  sessionConnected: boolean;
  /** Its local ZK server (the one on the coordinator itself). */
  server: ZkServerState;
  /** What `srvr` said, or why the server is taken as not serving or unknown. */
  serverDetail: string;
  /** Milliseconds since it last wrote a keepalive. */
  msSinceKeepalive: number;
}

/** Asks another coordinator's keepaliled, over the cluster network, for its {@link ZkReach}. */
export interface WitnessPeers {
  /** Rejects when the coordinator does not answer within `deadlineMs` (or refuses, or fails). */
  ask(coordinator: string, opts: PeerCallOptions): Promise<ZkReach>;
}

/** A running witness server. */
export interface WitnessHandle {
  /** Where it listens (`host:port`), for logs. */
  readonly address: string;
  close(): Promise<void>;
}

/**
 * Serves this coordinator's {@link ZkReach} to the other nodes (the real one: gRPC on TCP, bound to
 * the address the node's name resolves to, never a wildcard).
 */
export interface WitnessEndpoint {
  /** Starts serving `answer`; rejects when it cannot listen (the caller retries). */
  serve(answer: (signal: AbortSignal) => Promise<ZkReach>): Promise<WitnessHandle>;
}

/** This coordinator's own Zookeeper server, probed with `srvr` on its client port. */
export interface LocalZkServer {
  /** Never rejects: a failure to ask is `unknown` (or `not-serving` when nothing listens). */
  probe(opts: { timeoutMs: number; signal?: AbortSignal }): Promise<{ state: ZkServerState; detail: string }>;
}

/** The suicide peer check's ports, together. */
export interface WitnessPorts {
  peers: WitnessPeers;
  endpoint: WitnessEndpoint;
  localServer: LocalZkServer;
}
