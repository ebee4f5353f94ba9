/**
 * A real multi-host cluster on one machine, for the demo and the end-to-end tests (root only).
 * See tests/cluster/README.md.
 */
export { createCluster, openCluster, type ClusterDeps } from './cluster.js';
export { ClusterError, PrerequisiteError, HostPoweredOffError } from './errors.js';
export { missingPrerequisites, assertPrerequisites } from './prereqs.js';
export { planCluster, type ClusterPlan, type HostPlan } from './plan.js';
export { sweepCluster, sweepSync } from './teardown.js';
export { fourLetterWord, quorumFrom, parseMode } from './zookeeper.js';
export { ipmitool, ipmitoolArgs } from './ipmi.js';
export { clusterProcesses, lastTick, listRunning } from './inspect.js';
export { waitFor } from './run.js';
export { systemctlShimPath, type CephCluster } from './ceph.js';
export { planCeph, clusterCephConf, unitServiceName, CEPH_HOST_PATHS, type CephPlan } from './ceph-plan.js';
export type {
  Cluster,
  ClusterHost,
  ClusterOptions,
  DomainXmlOptions,
  GuestImage,
  HostDirs,
  IpmiEndpoint,
  NetworkName,
  ServiceSpec,
  ZkEnsemble,
  ZkServerStatus,
} from './types.js';
