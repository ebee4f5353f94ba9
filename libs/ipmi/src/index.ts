/**
 * IPMI: the port (chassis power status/off/on of one BMC), its ipmitool adapter, a fake with
 * failure knobs, and the fence procedure (success = the node confirmed off). Used by keepaliled
 * (fencing others) and the supervisor (self-check).
 *
 * @module
 */
export * from './ipmi.js';
export * from './ipmi-ipmitool.js';
export * from './ipmi-fake.js';
export * from './fence-ipmi.js';
export { classifyFailure, parsePowerControl, parsePowerStatus } from './ipmitool-output.js';
