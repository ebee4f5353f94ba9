/**
 * @pvc/hostnet — netd's host-networking library, also called by the supervisor at bring-up:
 * the kernel parameters (sysctls) the cluster needs, applied for real through {@link SysctlPort},
 * and the host interface plan (bridges, addresses, default route), which is NOT applied yet
 * (see {@link configureHostInterfaces}).
 */
export * from './sysctl-port.js';
export * from './sysctl.js';
export * from './interfaces.js';
export * from './setup.js';
