export * from './errors.js';
export * from './clock.js';
export * from './exec.js';
export * from './logger.js';
export * from './shutdown.js';
export { FakeExec, type ExecCall } from './testing/fake-exec.js';
export * from './version.js';
export { rejectionOf } from './testing/rejection.js';
export { withTempDir } from './testing/temp-dir.js';
