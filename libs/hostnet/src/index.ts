/**
 * @pvc/hostnet — netd's host-networking library, also called by the supervisor at bring-up
 * ({@link setupHostNetworking}), both applied for real and only where the host differs:
 *
 * - the host interfaces ({@link planHostInterfaces} → {@link diffHostInterfaces} →
 *   {@link applyHostInterfaces}, through {@link LinkPort}: `ip` and `arping -D`): each configured
 *   device with its MTU, up, in its bridge (`brcluster`, `brstorage`, `brupstream`; created with
 *   STP off and no forward delay), the node addresses on the bridges after a duplicate address
 *   probe, the default route via the upstream gateway. Nothing is ever deleted: addresses the
 *   configuration does not name (netd's floating addresses) and a default route via another
 *   gateway are left alone and logged. A missing device, a refused MTU, an address in use or an
 *   unreachable gateway is a {@link HostNetworkError} naming the config key. SR-IOV is not set up
 *   yet.
 * - the kernel parameters (sysctls) the cluster needs, through {@link SysctlPort}.
 */
export * from './errors.js';
export * from './link-port.js';
export * from './ip-links.js';
export * from './fake-links.js';
export * from './sysctl-port.js';
export * from './sysctl.js';
export * from './interfaces.js';
export * from './interfaces-diff.js';
export * from './interfaces-apply.js';
export * from './setup.js';
