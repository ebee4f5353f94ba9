/**
 * The state and choice vocabularies of schema v15 (pvc-inventory §1–§2.3, §5, §6, §9): one list
 * each, the union type derived from it, used by the key table's codecs and by every service.
 *
 * @module
 */

/** `/nodes/<n>` root and `daemonmode`. */
export const DAEMON_MODES = ['coordinator', 'hypervisor'] as const;
export type DaemonMode = (typeof DAEMON_MODES)[number];

/** `/nodes/<n>/daemonstate`. `dead`/`fenced` are written only by a fencer. */
export const DAEMON_STATES = ['init', 'run', 'shutdown', 'stop', 'dead', 'fenced'] as const;
export type DaemonState = (typeof DAEMON_STATES)[number];

/** `/nodes/<n>/routerstate`. */
export const ROUTER_STATES = ['client', 'secondary', 'takeover', 'primary', 'relinquish'] as const;
export type RouterState = (typeof ROUTER_STATES)[number];

/** `/nodes/<n>/domainstate`. */
export const NODE_DOMAIN_STATES = ['ready', 'flush', 'flushed', 'unflush', 'fence-flush'] as const;
export type NodeDomainState = (typeof NODE_DOMAIN_STATES)[number];

/** Every `domains/<uuid>/state` value the original writes or lists (inventory §5). */
export const VM_STATES = [
  'start', 'restart', 'shutdown', 'stop', 'disable', 'fail', 'migrate', 'migrate-live', 'unmigrate',
  'provision', 'import', 'restore', 'mirror', 'delete',
] as const;
export type VmState = (typeof VM_STATES)[number];

/** The cluster's target selectors (`/config/migration_target_selector`). */
export const SELECTORS = ['mem', 'memprov', 'load', 'vcpus', 'vms'] as const;
export type Selector = (typeof SELECTORS)[number];

/** A VM's `node_selector`: a selector, or `none` = the cluster's. */
export const VM_SELECTORS = ['none', ...SELECTORS] as const;
export type VmSelector = (typeof VM_SELECTORS)[number];

/** A VM's `migration_method` (lower-cased by the original's writers). */
export const MIGRATION_METHODS = ['none', 'live', 'shutdown'] as const;
export type MigrationMethod = (typeof MIGRATION_METHODS)[number];

/** `/networks/<vni>/nettype`. */
export const NETWORK_TYPES = ['managed', 'bridged'] as const;
export type NetworkType = (typeof NETWORK_TYPES)[number];

/** `/faults/<id>/status`. */
export const FAULT_STATUSES = ['new', 'ack'] as const;
export type FaultStatus = (typeof FAULT_STATUSES)[number];

/** True when `value` is one of `values` (narrows to the union). */
export function isOneOf<T extends string>(values: readonly T[], value: string | undefined): value is T {
  return value !== undefined && (values as readonly string[]).includes(value);
}
