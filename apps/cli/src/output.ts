import { stripVTControlCharacters, styleText } from 'node:util';
import type { CliIo } from './io.js';
import { usage } from './errors.js';

/** Output formats of read commands. */
export type Format = 'human' | 'json';
export const FORMATS: readonly Format[] = ['human', 'json'];

/** Parses `--format`. */
export function parseFormat(raw: string | undefined): Format {
  const f = (raw ?? 'human').toLowerCase();
  if (f === 'human' || f === 'json') return f;
  throw usage(`unknown --format "${raw ?? ''}": expected human or json`);
}

type Style = Parameters<typeof styleText>[0];

/** One column of a table. */
export interface Column<T> {
  header: string;
  value: (row: T) => string | number;
  /** Style of a cell (terminal only). */
  style?: (row: T) => Style | undefined;
  align?: 'left' | 'right';
}

/** Colours of VM, daemon, router and domain states in tables. */
export function stateStyle(state: string): Style | undefined {
  switch (state) {
    case 'start': case 'run': case 'ready': case 'primary':
      return 'green';
    case 'fail': case 'dead': case 'fenced':
      return 'red';
    case 'migrate': case 'migrate-live': case 'unmigrate': case 'restart': case 'shutdown':
    case 'flush': case 'unflush': case 'fence-flush': case 'init': case 'takeover': case 'relinquish':
      return 'yellow';
    case 'stop': case 'disable': case 'flushed': case 'stop ': case 'shutdown ':
      return 'blue';
    default:
      return undefined;
  }
}

/** Writes results: tables and key/value blocks for people, JSON for scripts, progress on stderr. */
export class Output {
  readonly colour: boolean;
  private progressShown = '';

  constructor(private readonly io: CliIo, colour: boolean | undefined) {
    const env = io.env;
    this.colour = colour ?? (io.stdout.isTTY === true && env.NO_COLOR === undefined && env.TERM !== 'dumb');
  }

  /** A line on stdout. */
  line(text = ''): void {
    this.clearProgress();
    this.io.stdout.write(`${text}\n`);
  }

  /** A note on stderr (never mixed into the data on stdout). */
  note(text: string): void {
    this.clearProgress();
    this.io.stderr.write(`${text}\n`);
  }

  /** Pretty JSON on stdout. */
  json(value: unknown): void {
    this.line(JSON.stringify(value, null, 2));
  }

  /** Text with a style when colour is on. */
  paint(style: Style | undefined, text: string): string {
    return this.colour && style !== undefined && text !== '' ? styleText(style, text, { validateStream: false }) : text;
  }

  /** Columns aligned on the widest cell; a bold header on a terminal. */
  table<T>(rows: readonly T[], columns: readonly Column<T>[]): void {
    const cells = rows.map((r) => columns.map((c) => String(c.value(r))));
    const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((row) => visibleWidth(row[i] ?? ''))));
    const pad = (text: string, i: number): string => {
      const gap = ' '.repeat(Math.max(0, (widths[i] ?? 0) - visibleWidth(text)));
      return columns[i]?.align === 'right' ? gap + text : text + gap;
    };
    this.line(this.paint('bold', columns.map((c, i) => pad(c.header, i)).join('  ').trimEnd()));
    rows.forEach((row, r) => {
      const line = columns.map((c, i) => pad(this.paint(c.style?.(row), cells[r]?.[i] ?? ''), i));
      this.line(line.join('  ').trimEnd());
    });
  }

  /** `Key:  value` lines, keys aligned. */
  keyValues(pairs: readonly (readonly [string, string | number, Style?])[]): void {
    const width = Math.max(0, ...pairs.map(([k]) => k.length + 1));
    for (const [k, v, style] of pairs) this.line(`${this.paint('bold', `${k}:`.padEnd(width))}  ${this.paint(style, String(v))}`);
  }

  /**
   * Progress of a `--wait` on stderr: redrawn in place on a terminal, one line per change
   * otherwise (so logs of scripted runs show each step).
   */
  progress(text: string): void {
    if (text === this.progressShown) return;
    if (this.io.stderr.isTTY === true) this.io.stderr.write(`\r\x1b[2K${text}`);
    else this.io.stderr.write(`${text}\n`);
    this.progressShown = text;
  }

  /** Ends a progress line so that the next output starts on a fresh line. */
  clearProgress(): void {
    if (this.progressShown !== '' && this.io.stderr.isTTY === true) this.io.stderr.write('\n');
    this.progressShown = '';
  }
}

function visibleWidth(text: string): number {
  return stripVTControlCharacters(text).length;
}
