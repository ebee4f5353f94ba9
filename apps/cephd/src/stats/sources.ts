/**
 * The Ceph commands behind the storage stats (pvc-inventory §3.1), run in parallel through the
 * Ceph command port, each with its own deadline. A command that fails, times out or prints
 * malformed JSON gives a failed source with the reason; the others are unaffected.
 */
import { describeError } from '@pvc/runtime';
import type { CephCli, CephTool } from '../host/ceph-cli.js';

/** One source: a command, run for text or for JSON. */
interface Source {
  readonly tool: CephTool;
  readonly args: readonly string[];
  readonly json: boolean;
}

/** Every source and its command (`json` ones get `--format json` from the port). */
export const SOURCES = {
  /** `/ceph`: `ceph status` as Ceph prints it for people. */
  status: { tool: 'ceph', args: ['status'], json: false },
  /** `/ceph/health`: read as text and checked by the key's codec. */
  health: { tool: 'ceph', args: ['health', '--format', 'json'], json: false },
  /** `/ceph/util`: `ceph df` as Ceph prints it for people. */
  util: { tool: 'ceph', args: ['df'], json: false },
  cephDf: { tool: 'ceph', args: ['df'], json: true },
  radosDf: { tool: 'rados', args: ['df'], json: true },
  osdDump: { tool: 'ceph', args: ['osd', 'dump'], json: true },
  osdDf: { tool: 'ceph', args: ['osd', 'df'], json: true },
  osdStatus: { tool: 'ceph', args: ['osd', 'status'], json: false },
} as const satisfies Record<string, Source>;

export type SourceName = keyof typeof SOURCES;

/** A source's outcome: its output (text, or the parsed JSON), or why there is none. */
export type SourceResult = { ok: true; value: unknown } | { ok: false; reason: string };

/** The outcome of each source that was asked for. */
export type Gathered = Partial<Record<SourceName, SourceResult>>;

/** The command line of a source as it appears in reasons (`ceph osd df`). */
export function commandOf(name: SourceName): string {
  const s: Source = SOURCES[name];
  return [s.tool, ...s.args.filter((a) => a !== '--format' && a !== 'json')].join(' ');
}

/**
 * Runs the `names` sources in parallel, each bounded by `timeoutMs` (the port kills a command past
 * it) and aborted by `signal`. Never rejects: each failure is its source's `reason`.
 */
export async function gather(cli: CephCli, names: readonly SourceName[], opts: { timeoutMs: number; signal?: AbortSignal | undefined }): Promise<Gathered> {
  const results = await Promise.all(
    names.map(async (name): Promise<[SourceName, SourceResult]> => {
      const s: Source = SOURCES[name];
      try {
        const value = s.json ? await cli.json(s.tool, s.args, opts) : await cli.text(s.tool, s.args, opts);
        return [name, { ok: true, value }];
      } catch (err) {
        return [name, { ok: false, reason: describeError(err) }];
      }
    }),
  );
  return Object.fromEntries(results) as Gathered;
}
