import type { LibvirtState, ObservedDomain } from '../model.js';
import type { DomainStats } from '../vm-stats.js';

/**
 * The libvirt port: exactly what vmd does with the hypervisor. Real adapter:
 * {@link createLibvirtHypervisor} (@unraid/libvirt over the configured URI, plus `virsh domstats`
 * through Exec); fake: {@link FakeHypervisor}. Every method rejects with a `VmdError`
 * (`LIBVIRT_UNAVAILABLE` when libvirtd cannot be reached, `NO_DOMAIN` when the domain is absent,
 * else `LIBVIRT_ERROR` carrying libvirt's own message).
 */
export interface Hypervisor {
  /** Every domain libvirt knows here (transient domains exist only while active). */
  list(): Promise<ObservedDomain[]>;
  /**
   * Runtime statistics of every running domain here (PVC's or not), for the `stats` keys. A domain
   * that stops while being read is left out.
   */
  stats(): Promise<DomainStats[]>;
  /** Creates and starts a transient domain (`virDomainCreateXML`). */
  createTransient(xml: string): Promise<void>;
  /** Asks the guest to power off (ACPI); returns at once. */
  shutdown(uuid: string): Promise<void>;
  /** Hard stop (`virDomainDestroy`). Absent = already stopped = success. */
  destroy(uuid: string): Promise<void>;
  /** Drops the connection; the next call reconnects. */
  close(): Promise<void>;
}

/** Active = occupies the host (anything but shutoff/crashed/nostate). */
export function isActiveState(state: LibvirtState): boolean {
  return state === 'running' || state === 'blocked' || state === 'paused' || state === 'shutdown' || state === 'pmsuspended';
}
