import { readdir, readFile, readlink } from 'node:fs/promises';
import { connect } from 'node:net';

/** Who holds a unix socket path: the processes with a socket bound to it (listening or accepted). */
export interface SocketHold {
  /** The pids found; empty when the holder cannot be named (another user's process, no /proc). */
  readonly pids: readonly number[];
}

/** The port through which the supervisor sees whether a previous generation still holds a socket. */
export interface SocketHolders {
  /** Undefined when no live process holds `path` (absent, or a stale file whose owner is gone). */
  holders(path: string): Promise<SocketHold | undefined>;
}

/**
 * Inodes of the sockets bound to `path` in a `/proc/net/unix` listing (columns: Num RefCount
 * Protocol Flags Type St Inode Path). Accepted connections carry their listener's path, so a
 * process that closed its listener but is still finishing calls is found too.
 */
export function unixSocketInodes(listing: string, path: string): string[] {
  const out: string[] = [];
  for (const line of listing.split('\n').slice(1)) {
    const cols = line.trim().split(/\s+/);
    if (cols.length >= 8 && cols.slice(7).join(' ') === path && cols[6] !== undefined) out.push(cols[6]);
  }
  return out;
}

/** Pids with an open fd on one of the socket inodes (scans `/proc/<pid>/fd`; unreadable ones are skipped). */
async function pidsHolding(inodes: readonly string[]): Promise<number[]> {
  const wanted = new Set(inodes.map((i) => `socket:[${i}]`));
  const pids: number[] = [];
  for (const entry of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry)) continue;
    const fds = await readdir(`/proc/${entry}/fd`).catch(() => [] as string[]);
    for (const fd of fds) {
      const target = await readlink(`/proc/${entry}/fd/${fd}`).catch(() => '');
      if (wanted.has(target)) {
        pids.push(Number(entry));
        break;
      }
    }
  }
  return pids;
}

/** Whether something accepts connections on `path` (the fallback without `/proc/net/unix`). */
function accepting(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect(path);
    sock.once('connect', () => (sock.destroy(), resolve(true)));
    sock.once('error', () => resolve(false));
  });
}

/**
 * The real port (Linux): `/proc/net/unix` says whether any socket is bound to the path — cheap,
 * one read; only then is `/proc/<pid>/fd` scanned to name the holder. Without `/proc`, a
 * connect probe (holder unnamed).
 */
export function createProcSocketHolders(): SocketHolders {
  return {
    async holders(path) {
      const listing = await readFile('/proc/net/unix', 'utf8').catch(() => undefined);
      if (listing === undefined) return (await accepting(path)) ? { pids: [] } : undefined;
      const inodes = unixSocketInodes(listing, path);
      if (inodes.length === 0) return undefined;
      return { pids: await pidsHolding(inodes) };
    },
  };
}
