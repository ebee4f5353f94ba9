/**
 * @pvc/zk — the only package that talks to Zookeeper: the ZkClient port and its real
 * implementation, the v15 schema paths, value codecs, whole-object definitions and
 * kazoo-compatible locks. The fake lives in `@pvc/zk/testing`.
 */
export * from './errors.js';
export type * from './types.js';
export * from './schema.js';
export * as codec from './codec.js';
export type { Codec, DecodeResult, StaticData } from './codec.js';
export * from './objects.js';
export * from './vocab.js';
export * from './keys.js';
export * from './ceph-stats.js';
export * from './key-read.js';
export * from './records.js';
export * from './domain-bridges.js';
export * from './fill.js';
export * from './faults.js';
export { KazooLock, Lock, ReadLock, WriteLock, createLock } from './lock.js';
export type { AcquireOptions, LockHolder, LockOptions, LostReason } from './lock.js';
export { LOCK_RECIPES, findPredecessor, sortContenders } from './lock-naming.js';
export { connectZk, connectionString, RealZkClient, DEFAULT_ZK_PORT } from './real/connect.js';
export type { ConnectOptions } from './real/connect.js';
export type { SessionCredentials } from './real/node-session.js';
export { READ_TIMEOUT_CAP_MS } from './real/read-timeout.js';
export { ZkLogSink, appendTrimmed } from './log-sink.js';
export type { ZkLogSinkOptions, ZkLogSinkState, ZkLogSinkStats } from './log-sink.js';
export * from './server-settings.js';
export * from './networks.js';
export * from './networks-addr.js';
export * from './metadata-caller.js';
export * from './storage-bytes.js';
export * from './storage-requests.js';
export * from './storage-request-io.js';
export * from './metrics-read.js';
export { domainXmlMetrics, readVmMetricsFacts, vmStatsFacts } from './metrics-vm.js';
export type { VmDisk, VmDiskCounters, VmInterface, VmNetCounters, VmStatsFacts } from './metrics-vm.js';
