/**
 * Reading what the test guest printed on its console (init.sh): its lease, renew and ping lines.
 * A console log is appended to across a live migration, so a byte offset taken before an action
 * ({@link consoleSize}) separates what the guest printed before it from what came after.
 */
import { readFileSync, statSync } from 'node:fs';

/** The console log's size in bytes (0 when it does not exist yet): an offset for the readers below. */
export function consoleSize(file: string): number {
  return statSync(file, { throwIfNoEntry: false })?.size ?? 0;
}

/** The text after `from` (bytes) of `name`'s lines, without the `pvc-guest <name> ` prefix. */
export function guestLines(file: string, name: string, from = 0): string[] {
  let buf: Buffer;
  try {
    buf = readFileSync(file);
  } catch {
    return [];
  }
  const prefix = `pvc-guest ${name} `;
  return buf.subarray(from).toString('utf8').split(/\r?\n/).map((l) => l.replace(/\r/g, ''))
    .filter((l) => l.startsWith(prefix)).map((l) => l.slice(prefix.length));
}

/** A DHCP result the guest printed: `lease <ip> bound|renew router <gw> server <id>`. */
export interface ConsoleLease {
  ip: string;
  event: 'bound' | 'renew';
  router: string;
  server: string;
}

/** The guest's lease lines after `from`. */
export function consoleLeases(file: string, name: string, from = 0): ConsoleLease[] {
  return guestLines(file, name, from).flatMap((l) => {
    const m = /^lease (\S+) (bound|renew) router (\S+) server (\S+)$/.exec(l);
    return m ? [{ ip: m[1]!, event: m[2] as 'bound' | 'renew', router: m[3]!, server: m[4]! }] : [];
  });
}

/** The guest's ping results for `target` after `from`, in order. */
export function consolePings(file: string, name: string, target: string, from = 0): { seq: number; ok: boolean }[] {
  return guestLines(file, name, from).flatMap((l) => {
    const m = /^ping (\S+) (\d+) (ok|fail)$/.exec(l);
    return m && m[1] === target ? [{ seq: Number(m[2]), ok: m[3] === 'ok' }] : [];
  });
}

/** The longest run of consecutive failed pings in `pings`, and whether an ok came after it. */
export function failRun(pings: readonly { ok: boolean }[]): { longest: number; okAfter: boolean } {
  let longest = 0;
  let cur = 0;
  let endOfLongest = -1;
  pings.forEach((p, i) => {
    cur = p.ok ? 0 : cur + 1;
    if (cur > longest) {
      longest = cur;
      endOfLongest = i;
    }
  });
  return { longest, okAfter: longest > 0 && pings.slice(endOfLongest + 1).some((p) => p.ok) };
}

/** Lines that say the guest's network did not come up (`net error …`, `net insmod … failed`). */
export function consoleNetErrors(file: string, name: string): string[] {
  return guestLines(file, name).filter((l) => l.startsWith('net error') || / failed/.test(l) && l.startsWith('net insmod'));
}

/** What the guest's disk steps printed (init.sh, `pvc.disk` / `pvc.marker` / `pvc.diskwrite`), in order. */
export interface ConsoleDisk {
  /** Per boot, the marker its disk held before anything was written (`null` = `marker boot none`). */
  boots: (string | null)[];
  /** Markers written (`marker wrote <text>`), each after its fsync and sync returned. */
  wrote: string[];
  /** Periodic writes (`disk write <n> ok|fail`). */
  writes: { n: number; ok: boolean }[];
  /** `disk error …`, `disk insmod … failed`, `marker error …` lines. */
  errors: string[];
}

/** The guest's disk lines after `from` (bytes). */
export function consoleDisk(file: string, name: string, from = 0): ConsoleDisk {
  const out: ConsoleDisk = { boots: [], wrote: [], writes: [], errors: [] };
  for (const l of guestLines(file, name, from)) {
    let m: RegExpExecArray | null;
    if ((m = /^marker boot (.+)$/.exec(l))) out.boots.push(m[1] === 'none' ? null : m[1]!);
    else if ((m = /^marker wrote (.+)$/.exec(l))) out.wrote.push(m[1]!);
    else if ((m = /^disk write (\d+) (ok|fail)$/.exec(l))) out.writes.push({ n: Number(m[1]), ok: m[2] === 'ok' });
    else if (l.startsWith('disk error') || l.startsWith('marker error') || (l.startsWith('disk insmod') && / failed/.test(l))) out.errors.push(l);
  }
  return out;
}

/** A DNS lookup the guest made (init.sh `pvc.lookup`): `lookup <host>/<server> ok|fail <ms> <ip|why>`. */
export interface ConsoleLookup {
  host: string;
  server: string;
  ok: boolean;
  /** Duration in the guest, ms (10 ms resolution). */
  ms: number;
  /** The first address answered (ok), else why it failed. */
  value: string;
}

/** The guest's lookups after `from` (bytes), in order; only those of `host` when given. */
export function consoleLookups(file: string, name: string, from = 0, host?: string): ConsoleLookup[] {
  return guestLines(file, name, from).flatMap((l) => {
    const m = /^lookup ([^/\s]+)\/(\S+) (ok|fail) (\d+) ?(.*)$/.exec(l);
    if (!m || (host !== undefined && m[1] !== host)) return [];
    return [{ host: m[1]!, server: m[2]!, ok: m[3] === 'ok', ms: Number(m[4]), value: m[5]! }];
  });
}

/** A metadata request the guest made (init.sh `pvc.meta`): `meta <what> ok|fail <ms> <body|why>`. */
export interface ConsoleMeta {
  what: 'instance-id' | 'user-data';
  ok: boolean;
  /** Duration in the guest, ms (10 ms resolution). */
  ms: number;
  /** The body (line breaks as `|`), or why it failed. */
  value: string;
}

/** The guest's metadata requests after `from` (bytes), in order. */
export function consoleMeta(file: string, name: string, from = 0): ConsoleMeta[] {
  return guestLines(file, name, from).flatMap((l) => {
    const m = /^meta (instance-id|user-data) (ok|fail) (\d+) ?(.*)$/.exec(l);
    return m ? [{ what: m[1] as ConsoleMeta['what'], ok: m[2] === 'ok', ms: Number(m[3]), value: m[4]! }] : [];
  });
}
