/**
 * Port to the addresses netd moves between nodes: the floating addresses of the primary (and,
 * with client networks, the gateway addresses). Small on purpose: list, add, remove, announce.
 * The real adapter is {@link createIpAddresses} (`ip` and `arping` through Exec), the fake
 * {@link FakeAddresses}; one contract (`testing/address-contract.ts`) runs against both.
 *
 * @module
 */
import { PvcError } from '@pvc/runtime';

/** Why an address operation failed. */
export type AddressErrorCode = 'NO_DEVICE' | 'REFUSED' | 'UNAVAILABLE';

/** An address could not be listed, added or removed. */
export class AddressError extends PvcError {
  constructor(code: AddressErrorCode, message: string, cause?: unknown) {
    super(`ADDRESS_${code}`, message, { cause, retryable: code === 'UNAVAILABLE' });
  }
}

/** The port. Addresses are IPv4 `a.b.c.d/len`. */
export interface AddressPort {
  /** The IPv4 addresses on `device` now (`a.b.c.d/len`); throws NO_DEVICE when it does not exist. */
  list(device: string): Promise<string[]>;
  /** Adds `cidr` on `device`; already there = done. */
  add(cidr: string, device: string): Promise<void>;
  /** Removes `cidr` from `device`; not there (or no such device) = done. */
  remove(cidr: string, device: string): Promise<void>;
  /**
   * Tells the neighbours on `device` that `ip` is here now (gratuitous ARP), so they stop sending
   * to the previous holder's MAC. Best effort: resolves when sent, throws when it could not be.
   */
  announce(ip: string, device: string): Promise<void>;
}

/** The address part of `a.b.c.d/len`. */
export const ipOf = (cidr: string): string => cidr.split('/')[0] ?? cidr;
