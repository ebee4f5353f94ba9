export { buildGuestImage, isStaticElf, GuestBuildError, GUEST_INIT, type BuiltGuest, type BuildGuestOptions } from './build.js';
export { guestDomainXml, type GuestDomainOptions } from './domain-xml.js';
