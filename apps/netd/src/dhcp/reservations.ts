/**
 * DHCP reservations as dnsmasq hosts files (pvc-inventory §7.2): one file per MAC in the network's
 * `--dhcp-hostsdir`, named after the MAC and holding `mac,ip` (what the original writes; it writes
 * no hostname). dnsmasq reads new and changed files by itself (inotify) but keeps a deleted or
 * changed file's old entry until SIGHUP, so every change is followed by a SIGHUP (the caller's).
 *
 * Files are written as a dot-file then renamed: dnsmasq ignores dot-files, so it never reads half
 * a file. Other dot-files in the directory are left alone; every other file not wanted is removed.
 */
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DhcpError } from './errors.js';

/** One reservation (`/networks/<vni>/dhcp4_reservations/<mac>` and its `ipaddr`). */
export interface Reservation {
  /** Lowercase, as the API writes the key. */
  readonly mac: string;
  readonly ipaddr: string;
}

/** What a sync does. */
export interface ReservationPlan {
  readonly write: readonly { file: string; content: string }[];
  readonly remove: readonly string[];
}

/** The content of a reservation's file. */
export function reservationText(r: Reservation): string {
  return `${r.mac},${r.ipaddr}`;
}

const FILE_NAME = /^[0-9A-Za-z][0-9A-Za-z:_-]*$/;

/**
 * Pure plan: `present` = the directory's non-dot files and their contents. Throws
 * {@link DhcpError} `DHCP_BAD_NETWORK` naming the reservation when a MAC cannot be a file name.
 */
export function planReservations(vni: string, present: ReadonlyMap<string, string>, wanted: readonly Reservation[]): ReservationPlan {
  const want = new Map<string, string>();
  for (const r of wanted) {
    if (!FILE_NAME.test(r.mac)) throw new DhcpError('DHCP_BAD_NETWORK', vni, `/networks/${vni}/dhcp4_reservations/${r.mac}: not a MAC address usable as a file name`);
    if (!/^[0-9A-Fa-f:.]+$/.test(r.ipaddr)) throw new DhcpError('DHCP_BAD_NETWORK', vni, `/networks/${vni}/dhcp4_reservations/${r.mac}/ipaddr: ${JSON.stringify(r.ipaddr)} is not an address`);
    want.set(r.mac, reservationText(r));
  }
  const write = [...want].filter(([file, content]) => present.get(file) !== content).map(([file, content]) => ({ file, content }));
  const remove = [...present.keys()].filter((f) => !want.has(f)).sort();
  return { write: write.sort((a, b) => a.file.localeCompare(b.file)), remove };
}

/** Reads the directory's non-dot files (an absent directory is empty). */
async function readPresent(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return out;
    throw err;
  }
  for (const name of names.filter((n) => !n.startsWith('.'))) {
    out.set(name, await readFile(join(dir, name), 'utf8').catch(() => ''));
  }
  return out;
}

/**
 * Makes `dir` hold exactly the files of `wanted`; resolves with true when anything changed (the
 * caller then SIGHUPs dnsmasq). Throws {@link DhcpError} `DHCP_FILES` naming the file on failure.
 */
export async function syncReservations(vni: string, dir: string, wanted: readonly Reservation[]): Promise<boolean> {
  let file = dir;
  try {
    await mkdir(dir, { recursive: true });
    const plan = planReservations(vni, await readPresent(dir), wanted);
    for (const w of plan.write) {
      file = join(dir, w.file);
      const tmp = join(dir, `.${w.file}.tmp`);
      await writeFile(tmp, w.content, { mode: 0o644 });
      await rename(tmp, file);
    }
    for (const r of plan.remove) {
      file = join(dir, r);
      await rm(file, { force: true, recursive: true });
    }
    return plan.write.length > 0 || plan.remove.length > 0;
  } catch (err) {
    if (err instanceof DhcpError) throw err;
    throw new DhcpError('DHCP_FILES', vni, `${file}: reservations not written: ${(err as Error).message}`, err);
  }
}
