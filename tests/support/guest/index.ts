export { buildGuestImage, isStaticElf, GuestBuildError, GUEST_INIT, type BuiltGuest, type BuildGuestOptions } from './build.js';
export { guestDomainXml, type GuestDomainOptions, type GuestInterface } from './domain-xml.js';
export { resolveNetModules, NET_DRIVERS, type NetModules, type GuestModule } from './net-modules.js';
