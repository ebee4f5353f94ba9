/**
 * The local gRPC APIs by the names the services use: each service definition and message type is
 * the generated one (`src/generated/**`, from `proto/pvc/<svc>/v1/*.proto` by `npm run rpc:gen`),
 * only renamed here. Nothing is copied by hand: change the .proto, regenerate, and the compiler
 * shows every user of a changed field.
 */
import { PrimaryRoleServiceService } from './generated/pvc/common/v1/primary.js';
import { CephdServiceService } from './generated/pvc/cephd/v1/cephd.js';
import type { FlushLocksResponse, FlushMode, HeldLock } from './generated/pvc/cephd/v1/locks.js';
import { KeepalivedServiceService, type GetKeepaliveStateResponse } from './generated/pvc/keepaliled/v1/keepaliled.js';
import { WitnessServiceService, type GetZkReachResponse } from './generated/pvc/keepaliled/v1/witness.js';
import { NetdServiceService } from './generated/pvc/netd/v1/netd.js';
import { SupervisorServiceService, type ChildService } from './generated/pvc/supervisor/v1/supervisor.js';
import { VmdServiceService, type GetResourcesResponse } from './generated/pvc/vmd/v1/vmd.js';
import type { ApiOf } from './services.js';

// Every generated message type by its own name too (`GetResourcesResponse`, `FlushLocksRequest`, …),
// types only: the codecs stay behind the service definitions.
export type * from './generated/pvc/common/v1/primary.js';
export type * from './generated/pvc/common/v1/status.js';
export type * from './generated/pvc/cephd/v1/cephd.js';
export type * from './generated/pvc/cephd/v1/locks.js';
export type * from './generated/pvc/keepaliled/v1/keepaliled.js';
export type * from './generated/pvc/keepaliled/v1/witness.js';
export type * from './generated/pvc/netd/v1/netd.js';
export type * from './generated/pvc/supervisor/v1/supervisor.js';
export type * from './generated/pvc/vmd/v1/vmd.js';

/** pvc.common.v1.PrimaryRoleService (netd, cephd). */
export const PRIMARY_ROLE = PrimaryRoleServiceService;
export type PrimaryRoleApi = ApiOf<typeof PRIMARY_ROLE>;

/** pvc.vmd.v1.VmdService. */
export const VMD = VmdServiceService;
export type VmdApi = ApiOf<typeof VMD>;
/** What runs on a node, as vmd reports it (pvc.vmd.v1.GetResourcesResponse). */
export type NodeResources = GetResourcesResponse;

/** pvc.netd.v1.NetdService. */
export const NETD = NetdServiceService;
export type NetdApi = ApiOf<typeof NETD>;

/** pvc.cephd.v1.CephdService. */
export const CEPHD = CephdServiceService;
export type CephdApi = ApiOf<typeof CEPHD>;
/**
 * pvc.cephd.v1.FlushMode: `OWN_STALE` frees only locks held from the node's own storage address
 * (before a start); `FORCE` frees every lock (fence recovery). Unset = `OWN_STALE`.
 */
export type RbdFlushMode = FlushMode;
/** pvc.cephd.v1.HeldLock: a lock held from another address, which an own-stale flush left in place. */
export type RbdHeldLock = HeldLock;
/** pvc.cephd.v1.FlushLocksResponse. */
export type RbdFlushResponse = FlushLocksResponse;

/** pvc.keepaliled.v1.KeepalivedService. */
export const KEEPALIVED = KeepalivedServiceService;
export type KeepalivedApi = ApiOf<typeof KEEPALIVED>;
export type KeepaliveState = GetKeepaliveStateResponse;

/** pvc.keepaliled.v1.WitnessService: served over TCP on a coordinator's cluster address. */
export const WITNESS = WitnessServiceService;
export type WitnessApi = ApiOf<typeof WITNESS>;
/**
 * A coordinator's own reach of Zookeeper (pvc.keepaliled.v1.GetZkReachResponse): the answer of the
 * suicide peer check. `serverState` is `serving`, `not-serving` or `unknown`.
 */
export type ZkReachMessage = GetZkReachResponse;

/** pvc.supervisor.v1.SupervisorService. */
export const SUPERVISOR = SupervisorServiceService;
export type SupervisorApi = ApiOf<typeof SUPERVISOR>;
/** One service as the supervisor sees it (pvc.supervisor.v1.ChildService). */
export type ChildServiceInfo = ChildService;
