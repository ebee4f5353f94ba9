/**
 * Where dnsmasq's files live for one managed network (pvc-inventory §7.2). Pure.
 *
 * - `<dynamic_directory>/dnsmasq/<vni>/`: the reservations hosts directory (`--dhcp-hostsdir`), one
 *   file per MAC.
 * - `<dynamic_directory>/dnsmasq/dnsmasq-<vni>.pid`: dnsmasq's pid file (the original wrote none;
 *   with one, a dnsmasq left by a crashed netd can be found and stopped).
 * - `<dynamic_directory>/dnsmasq/init-leases-<vni>`: the stored leases in dnsmasq's lease-file
 *   format, written by netd just before it starts dnsmasq, for the hook's `init` (no Zookeeper
 *   session of its own at start-up).
 * - `<dynamic_directory>/dnsmasq/lease-hook`: the executable dnsmasq runs as `--dhcp-script` (a
 *   wrapper that starts the Node lease hook; shared by every network).
 * - `<log_directory>/dnsmasq/dnsmasq-<vni>.log`: dnsmasq's log (`--log-facility`).
 */
import { join } from 'node:path';

/** The files of one network's dnsmasq. */
export interface DnsmasqLayout {
  /** `<dynamic_directory>/dnsmasq` */
  readonly dir: string;
  /** `<dir>/<vni>`: reservations, one file per MAC. */
  readonly hostsDir: string;
  readonly pidFile: string;
  /** `<dir>/init-leases-<vni>`: what the hook's `init` prints when netd has written it. */
  readonly initLeasesFile: string;
  /** `<dir>/lease-hook`, the `--dhcp-script` wrapper. */
  readonly hookScript: string;
  /** `<log_directory>/dnsmasq` */
  readonly logDir: string;
  readonly logFile: string;
}

/** Directories from the config (`system.configuration.directories`). */
export interface DnsmasqDirectories {
  /** `dynamic_directory` */
  readonly dynamicDirectory: string;
  /** `log_directory` */
  readonly logDirectory: string;
}

/** The layout of network `vni`'s dnsmasq. */
export function dnsmasqLayout(dirs: DnsmasqDirectories, vni: string): DnsmasqLayout {
  const dir = join(dirs.dynamicDirectory, 'dnsmasq');
  const logDir = join(dirs.logDirectory, 'dnsmasq');
  return {
    dir,
    hostsDir: join(dir, vni),
    pidFile: join(dir, `dnsmasq-${vni}.pid`),
    initLeasesFile: join(dir, `init-leases-${vni}`),
    hookScript: join(dir, 'lease-hook'),
    logDir,
    logFile: join(logDir, `dnsmasq-${vni}.log`),
  };
}

/** The bridge of managed network `vni` (pvc-inventory §7.1). */
export function bridgeOf(vni: string): string {
  return `vmbr${vni}`;
}
