import pino from 'pino';
import type { DestinationStream } from 'pino';

/** ANSI colours per pino level, as the original coloured its state prefixes. */
const LEVELS: Readonly<Record<number, readonly [label: string, colour: string]>> = {
  10: ['TRACE', '\x1b[90m'],
  20: ['DEBUG', '\x1b[34m'],
  30: ['INFO ', '\x1b[32m'],
  40: ['WARN ', '\x1b[33m'],
  50: ['ERROR', '\x1b[31m'],
  60: ['FATAL', '\x1b[1;31m'],
};
const RESET = '\x1b[0m';
const OMIT = new Set(['level', 'time', 'msg', 'service', 'node', 'pid', 'hostname', 'name']);

/** How {@link humanLine} renders a line beyond the colours. */
export interface HumanLineOptions {
  /** Leave out the `service: ` part (a caller that prefixes the service itself). Default false. */
  omitService?: boolean;
  /** Time to show when the record has none (pino leaves it out when `log_dates` is off). */
  fallbackTime?: string;
}

/**
 * One JSON log line as a human-readable line: `[time] LEVEL service: msg key=value…`, the level
 * coloured when `colours` (the original's `log_colours`). Lines that are not JSON pass unchanged.
 */
export function humanLine(json: string, colours: boolean, opts: HumanLineOptions = {}): string {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const [label, colour] = LEVELS[Number(rec.level)] ?? ['?    ', ''];
  const level = colours && colour !== '' ? `${colour}${label}${RESET}` : label;
  const fields = Object.entries(rec)
    .filter(([k]) => !OMIT.has(k))
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
  const t = typeof rec.time === 'string' ? rec.time : opts.fallbackTime;
  const time = t === undefined ? '' : `${t} `;
  const service = opts.omitService ? '' : ` ${String(rec.service ?? '')}:`;
  return `${time}${level}${service} ${String(rec.msg ?? '')}${fields.length ? ' ' + fields.join(' ') : ''}\n`;
}

/** A destination that renders each JSON line with {@link humanLine} before writing it to `out`. */
export function humanDestination(out: { write(s: string): unknown }, colours: boolean): DestinationStream {
  return {
    write(chunk: string) {
      for (const line of chunk.split('\n')) if (line !== '') out.write(humanLine(line, colours));
    },
  };
}

/** A log file that can be reopened (logrotate renames it, then SIGHUP makes us write a new one). */
export interface ReopenableFile extends DestinationStream {
  reopen(): void;
  flushSync(): void;
  end(): void;
}

/** Opens `path` for appending (mode 0640, parent created), synchronously so no line is lost at exit. */
export function openLogFile(path: string): ReopenableFile {
  return pino.destination({ dest: path, sync: true, mkdir: true, mode: 0o640 } as Parameters<typeof pino.destination>[0]) as unknown as ReopenableFile;
}
