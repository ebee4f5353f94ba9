/** The DHCP/DNS server's errors: each names the network (VNI) and the key, file or process concerned. */
import { PvcError } from '@pvc/runtime';

/**
 * - `DHCP_BAD_NETWORK`: the network's keys cannot make a dnsmasq command line (a gateway, range or
 *   domain missing or malformed); the message names the key. Retrying cannot help until it changes.
 * - `DHCP_FILES`: the hosts directory, a reservation file, the log directory or the hook wrapper
 *   could not be written.
 * - `DNSMASQ_START_FAILED`: dnsmasq exited at once (bad option, address not on the bridge, port in use).
 * - `DNSMASQ_STOPPED`: the manager was stopped while an operation waited.
 * - `LEASE_STORE_FAILED`: a lease could not be written to or deleted from Zookeeper (the message
 *   names the lease key).
 */
export type DhcpErrorCode = 'DHCP_BAD_NETWORK' | 'DHCP_FILES' | 'DNSMASQ_START_FAILED' | 'DNSMASQ_STOPPED' | 'LEASE_STORE_FAILED';

/** An error of the DHCP/DNS server of one managed network. */
export class DhcpError extends PvcError {
  /** The network's VNI. */
  readonly vni: string;

  constructor(code: DhcpErrorCode, vni: string, message: string, cause?: unknown) {
    super(code, message, { cause, retryable: code !== 'DHCP_BAD_NETWORK' });
    this.vni = vni;
  }
}
