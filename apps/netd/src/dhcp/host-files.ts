/**
 * The file and process side effects of the dnsmasq manager, behind one port so the manager's
 * timeline is unit-tested with a fake (`testing/fake-dnsmasq.ts`).
 */
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { writeHookScript } from './hook-script.js';
import type { DnsmasqLayout } from './layout.js';
import { syncReservations, type Reservation } from './reservations.js';

/** What the manager does to files and foreign processes. */
export interface DnsmasqHost {
  /** Creates the hosts and log directories and writes the lease-hook wrapper. */
  prepare(layout: DnsmasqLayout, hookCommand: readonly string[]): Promise<void>;
  /** See {@link syncReservations}. */
  syncReservations(vni: string, layout: DnsmasqLayout, wanted: readonly Reservation[]): Promise<boolean>;
  /** The last `lines` lines of dnsmasq's log ('' when unreadable), for a start failure's message. */
  logTail(layout: DnsmasqLayout, lines: number): Promise<string>;
  /**
   * The pid of a dnsmasq of this network left by an earlier netd (its pid file names a live
   * process whose command line has this network's hosts directory), else undefined.
   */
  findLeftover(layout: DnsmasqLayout): Promise<number | undefined>;
  /** Sends `signal` to `pid`; false when it no longer exists. */
  signal(pid: number, signal: NodeJS.Signals | 0): boolean;
  /** Writes the `init` leases file (0600, whole or not at all); `undefined` removes it. */
  writeInitLeases(layout: DnsmasqLayout, text: string | undefined): Promise<void>;
  /** Removes the hosts directory, the pid file and the `init` leases file (network removed). */
  removeFiles(layout: DnsmasqLayout): Promise<void>;
}

/** The real host: node:fs and process.kill. */
export function createDnsmasqHost(): DnsmasqHost {
  return {
    async prepare(layout, hookCommand) {
      await mkdir(layout.hostsDir, { recursive: true });
      await mkdir(layout.logDir, { recursive: true });
      await writeHookScript(layout.hookScript, hookCommand);
    },
    syncReservations: (vni, layout, wanted) => syncReservations(vni, layout.hostsDir, wanted),
    async logTail(layout, lines) {
      const text = await readFile(layout.logFile, 'utf8').catch(() => '');
      return text.trimEnd().split('\n').slice(-lines).join('\n');
    },
    async findLeftover(layout) {
      const pid = Number((await readFile(layout.pidFile, 'utf8').catch(() => '')).trim());
      if (!Number.isInteger(pid) || pid <= 1) return undefined;
      const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
      return cmdline.split('\0').includes(`--dhcp-hostsdir=${layout.hostsDir}`) ? pid : undefined;
    },
    signal(pid, signal) {
      try {
        process.kill(pid, signal);
        return true;
      } catch {
        return false;
      }
    },
    async writeInitLeases(layout, text) {
      if (text === undefined) return rm(layout.initLeasesFile, { force: true });
      const tmp = `${layout.initLeasesFile}.${process.pid}.tmp`;
      await writeFile(tmp, text, { mode: 0o600 });
      await rename(tmp, layout.initLeasesFile);
    },
    async removeFiles(layout) {
      await rm(layout.hostsDir, { recursive: true, force: true });
      await rm(layout.pidFile, { force: true });
      await rm(layout.initLeasesFile, { force: true });
    },
  };
}
