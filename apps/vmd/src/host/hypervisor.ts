import type { ObservedDomain } from '../model.js';

/**
 * The libvirt port: exactly what vmd does with the hypervisor. Real adapter:
 * {@link createLibvirtHypervisor} (@unraid/libvirt over the configured URI); fake:
 * {@link FakeHypervisor}. Every method rejects with a `VmdError` (`LIBVIRT_UNAVAILABLE` when
 * libvirtd cannot be reached, `NO_DOMAIN` when the domain is absent, else `LIBVIRT_ERROR` carrying
 * libvirt's own message).
 */
export interface Hypervisor {
  /** Every domain libvirt knows here (transient domains exist only while active). */
  list(): Promise<ObservedDomain[]>;
  /** Creates and starts a transient domain (`virDomainCreateXML`). */
  createTransient(xml: string): Promise<void>;
  /** Asks the guest to power off (ACPI); returns at once. */
  shutdown(uuid: string): Promise<void>;
  /** Hard stop (`virDomainDestroy`). Absent = already stopped = success. */
  destroy(uuid: string): Promise<void>;
  /** Drops the connection; the next call reconnects. */
  close(): Promise<void>;
}

/** libvirt's virDomainState numbers as names. */
export const LIBVIRT_STATE_NAMES = ['nostate', 'running', 'blocked', 'paused', 'shutdown', 'shutoff', 'crashed', 'pmsuspended'] as const;

/** Active = occupies the host (anything but shutoff/crashed/nostate). */
export function isActiveState(state: string): boolean {
  return state === 'running' || state === 'blocked' || state === 'paused' || state === 'shutdown' || state === 'pmsuspended';
}
