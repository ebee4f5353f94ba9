/**
 * The Ceph command port ({@link CephCli}) over cephd's librados client: the storage stats' fixed
 * `ceph` commands are sent as monitor or manager commands from cephd's own process — the same JSON
 * the `ceph` tool sends, the same output buffer it prints — instead of starting a Python `ceph`
 * process for each (0.25–0.5 s of CPU apiece on a loaded 2-core host, seven per stats pass). Any
 * other command (`rbd`, `rados`, the storage requests' `ceph` commands) goes to `fallback`, the tools.
 *
 * Errors as the tools': a refused command is a {@link CephCommandError} with librados' reason, a
 * command past its deadline a TimeoutError (librados' own op timeout ends the call later),
 * malformed JSON a {@link CephOutputError}.
 *
 * At most {@link STATS_IN_FLIGHT} of these calls run at once, the others wait their turn within
 * their deadline (and are not sent once it passed): a call to a hung monitor holds one of koffi's
 * worker threads (4 here) until librados' op timeout, and passes every 5 s must not take them all
 * from the lock flushes of a fence recovery.
 */
import pLimit from 'p-limit';
import { realClock, TimeoutError, withinDeadline, type Clock } from '@pvc/runtime';
import { CephCommandError, CephOutputError, type CephCli, type CephRunOptions, type CephTool } from './ceph-cli.js';
import { RadosError, type RadosClient } from './librados.js';

/** The `ceph` commands sent through librados, and whether the monitor or the manager serves them (Pacific). */
const IN_PROCESS: Readonly<Record<string, 'mon' | 'mgr'>> = {
  status: 'mon',
  health: 'mon',
  df: 'mon',
  'osd dump': 'mon',
  'osd df': 'mgr',
  'osd status': 'mgr',
};

interface Mapped {
  readonly via: 'mon' | 'mgr';
  readonly cmd: Record<string, unknown>;
}

/** The command JSON of `ceph <args>` (with `--format json` when `json`), or undefined when it is not one of {@link IN_PROCESS}. */
export function radosCommandOf(tool: CephTool, args: readonly string[], json: boolean): Mapped | undefined {
  if (tool !== 'ceph') return undefined;
  const rest = [...args];
  let format = json ? 'json' : undefined;
  const at = rest.indexOf('--format');
  if (at >= 0) {
    format = rest[at + 1];
    rest.splice(at, 2);
  }
  const prefix = rest.join(' ');
  const via = IN_PROCESS[prefix];
  if (via === undefined) return undefined;
  return { via, cmd: { prefix, ...(format !== undefined ? { format } : {}) } };
}

/** librados calls of this adapter in flight at once. */
export const STATS_IN_FLIGHT = 2;

export function createRadosCephCli(rados: RadosClient, fallback: CephCli, clock: Clock = realClock): CephCli {
  const limit = pLimit(STATS_IN_FLIGHT);
  async function run(tool: CephTool, args: readonly string[], m: Mapped, opts: CephRunOptions): Promise<string> {
    opts.signal?.throwIfAborted();
    const what = [tool, ...args].join(' ');
    let expired = false;
    const call = limit(() => (expired ? Promise.resolve('') : m.via === 'mon' ? rados.monCommand(m.cmd) : rados.mgrCommand(m.cmd)));
    try {
      return await withinDeadline(clock, call, opts.timeoutMs);
    } catch (err) {
      if (err instanceof RadosError) throw new CephCommandError(tool, args, err.errno, err.message);
      if (err instanceof Error && err.message.startsWith('no answer within')) {
        expired = true;
        throw new TimeoutError(what, opts.timeoutMs);
      }
      throw err;
    }
  }
  return {
    async json(tool, args, opts) {
      const m = radosCommandOf(tool, args, true);
      if (!m) return fallback.json(tool, args, opts);
      const out = (await run(tool, args, m, opts)).trim();
      if (out === '') return null;
      try {
        return JSON.parse(out) as unknown;
      } catch (err) {
        throw new CephOutputError(tool, [...args, '--format', 'json'], `${err instanceof Error ? err.message : String(err)} (${out.slice(0, 80)})`);
      }
    },
    async text(tool, args, opts) {
      const m = radosCommandOf(tool, args, false);
      if (!m) return fallback.text(tool, args, opts);
      // The tool prints the buffer and ends it with a newline.
      const out = await run(tool, args, m, opts);
      return out === '' || out.endsWith('\n') ? out : `${out}\n`;
    },
  };
}
