import type { RpcServiceDef } from './services.js';

/** Empty request message. */
export type Empty = Record<string, never>;

/** pvc.common.v1.PrimaryRoleService (netd, cephd). */
export type PrimaryRoleApi = {
  setPrimary(req: { primary: boolean; reason: string }): Promise<{ primary: boolean }>;
};
export const PRIMARY_ROLE: RpcServiceDef<PrimaryRoleApi> = {
  proto: 'pvc/common/v1/primary.proto',
  service: 'pvc.common.v1.PrimaryRoleService',
};

/** What runs on a node, as vmd reports it (pvc.vmd.v1.GetResourcesResponse). */
export interface NodeResources {
  runningDomains: string[];
  memAllocMib: number;
  memProvMib: number;
  vcpuAlloc: number;
}

/** pvc.vmd.v1.VmdService. */
export type VmdApi = {
  getResources(req: Empty): Promise<NodeResources>;
  stopAll(req: { reason: string }): Promise<{ stopped: string[]; failed: string[] }>;
};
export const VMD: RpcServiceDef<VmdApi> = { proto: 'pvc/vmd/v1/vmd.proto', service: 'pvc.vmd.v1.VmdService' };

/** pvc.netd.v1.NetdService. */
export type NetdApi = {
  getNetworkStats(req: Empty): Promise<{ statsJson: string; networkCount: number }>;
};
export const NETD: RpcServiceDef<NetdApi> = { proto: 'pvc/netd/v1/netd.proto', service: 'pvc.netd.v1.NetdService' };

/**
 * pvc.cephd.v1.FlushMode: `OWN_STALE` frees only locks held from the node's own storage address
 * (before a start); `FORCE` frees every lock (fence recovery). Unset = `OWN_STALE`.
 */
export type RbdFlushMode = 'FLUSH_MODE_UNSPECIFIED' | 'FLUSH_MODE_OWN_STALE' | 'FLUSH_MODE_FORCE';

/** pvc.cephd.v1.HeldLock: a lock held from another address, which an own-stale flush left in place. */
export interface RbdHeldLock {
  image: string;
  lockId: string;
  locker: string;
  address: string;
}

/** pvc.cephd.v1.FlushLocksResponse. */
export interface RbdFlushResponse {
  flushed: string[];
  failed: string[];
  held: RbdHeldLock[];
}

/** pvc.cephd.v1.CephdService. */
export type CephdApi = {
  getStorageStats(req: Empty): Promise<{ enabled: boolean; osdCount: number }>;
  flushLocks(req: { images: string[]; mode?: RbdFlushMode; deadNode?: string }): Promise<RbdFlushResponse>;
};
export const CEPHD: RpcServiceDef<CephdApi> = { proto: 'pvc/cephd/v1/cephd.proto', service: 'pvc.cephd.v1.CephdService' };

/** pvc.keepaliled.v1.KeepalivedService. */
export interface KeepaliveState {
  daemonState: string;
  routerState: string;
  lastKeepaliveMs: number;
  missedKeepalives: number;
  health: number;
}
export type KeepalivedApi = {
  getKeepaliveState(req: Empty): Promise<KeepaliveState>;
};
export const KEEPALIVED: RpcServiceDef<KeepalivedApi> = {
  proto: 'pvc/keepaliled/v1/keepaliled.proto',
  service: 'pvc.keepaliled.v1.KeepalivedService',
};

/**
 * A coordinator's own reach of Zookeeper (pvc.keepaliled.v1.GetZkReachResponse): the answer of the
 * suicide peer check. `serverState` is `serving`, `not-serving` or `unknown`.
 */
export interface ZkReachMessage {
  node: string;
  sessionConnected: boolean;
  serverState: string;
  serverDetail: string;
  msSinceKeepalive: number;
}
/** pvc.keepaliled.v1.WitnessService: served over TCP on a coordinator's cluster address. */
export type WitnessApi = {
  getZkReach(req: Empty): Promise<ZkReachMessage>;
};
export const WITNESS: RpcServiceDef<WitnessApi> = {
  proto: 'pvc/keepaliled/v1/witness.proto',
  service: 'pvc.keepaliled.v1.WitnessService',
};

/** One service as the supervisor sees it (pvc.supervisor.v1.ChildService). */
export interface ChildServiceInfo {
  name: string;
  state: string;
  pid: number;
  restarts: number;
  lastExit: string;
}
export type SupervisorApi = {
  listServices(req: Empty): Promise<{ services: ChildServiceInfo[] }>;
};
export const SUPERVISOR: RpcServiceDef<SupervisorApi> = {
  proto: 'pvc/supervisor/v1/supervisor.proto',
  service: 'pvc.supervisor.v1.SupervisorService',
};
