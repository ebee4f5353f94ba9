export { buildGuestImage, isStaticElf, GuestBuildError, GUEST_INIT, type BuiltGuest, type BuildGuestOptions } from './build.js';
export { consoleDisk, consoleSize, guestLines, type ConsoleDisk } from './console.js';
export { guestDomainXml, type GuestDomainOptions, type GuestInterface, type GuestDisk } from './domain-xml.js';
export { resolveNetModules, resolveDiskModules, resolveModules, NET_DRIVERS, DISK_DRIVERS, type NetModules, type GuestModules, type GuestModule } from './net-modules.js';
