/**
 * @pvc/zk/testing — the in-memory fake ZK server and the ZkClient contract suite, for unit tests
 * of every service, plus helpers for tests against a real server.
 */
export { FakeZkServer } from './fake-server.js';
export type { FakeConnectOptions, SessionRef, WriteFailure } from './fake-server.js';
export { FakeZkStats } from './fake-stats.js';
export type { FakeZkOpKind, FakeZkStatsSnapshot } from './fake-stats.js';
export { registerZkContract } from './contract.js';
export type { ZkContractHarness } from './contract-harness.js';
export { ValueRecorder } from './recorder.js';
export { expireRealSession } from './real-expire.js';
