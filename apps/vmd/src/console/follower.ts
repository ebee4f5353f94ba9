import { describeError, type Logger } from '@pvc/runtime';
import type { ConsoleFiles, FileStat } from './files.js';
import { LineTail } from './tail.js';

/** At most this much of a file is read at once: only the last lines are kept anyway. */
export const MAX_READ_BYTES = 1 << 20;

/** Options of {@link ConsoleFollower}. */
export interface FollowerOptions {
  files: ConsoleFiles;
  path: string;
  /** `console_log_lines`. */
  lines: number;
  /** Writes the text (to `consolelog`); false (not now) or a rejection = retried at the next poll. */
  write: (text: string) => Promise<boolean>;
  logger: Logger;
}

/**
 * Follows one console log file: each {@link poll} stats it and, when size, mtime or inode changed,
 * reads only the new bytes (or the file again from its last {@link MAX_READ_BYTES} after a
 * truncation or rotation) and writes the last lines when they differ from what was written.
 * A missing file writes nothing (it may appear once the guest starts) and is logged once.
 */
export class ConsoleFollower {
  private readonly tail: LineTail;
  private seen: FileStat | undefined;
  private offset = 0;
  private written: string | undefined;
  private missingLogged = false;
  private failing = false;

  constructor(private readonly o: FollowerOptions) {
    this.tail = new LineTail(o.lines);
  }

  /** One check of the file; never rejects (errors are logged). */
  async poll(): Promise<void> {
    try {
      if (!(await this.read())) return;
      const text = this.tail.text();
      if (text !== this.written && (await this.o.write(text))) this.written = text;
      if (this.failing) this.o.logger.info({ path: this.o.path }, 'console log: followed again');
      this.failing = false;
    } catch (err) {
      if (!this.failing) this.o.logger.warn({ path: this.o.path, err: describeError(err) }, 'console log: cannot read or write it (retrying)');
      this.failing = true;
    }
  }

  /** Reads what changed; false when the file is absent. */
  private async read(): Promise<boolean> {
    const st = await this.o.files.stat(this.o.path);
    if (!st) {
      if (!this.missingLogged) this.o.logger.info({ path: this.o.path }, 'console log file does not exist (yet)');
      this.missingLogged = true;
      return false;
    }
    this.missingLogged = false;
    const prev = this.seen;
    if (prev && prev.size === st.size && prev.mtimeMs === st.mtimeMs && prev.ino === st.ino) return true;
    this.seen = st;
    if (!prev || st.ino !== prev.ino || st.size < this.offset) {
      this.tail.reset();
      this.offset = 0;
    }
    if (st.size <= this.offset) return true;
    const start = Math.max(this.offset, st.size - MAX_READ_BYTES);
    const skipped = start > this.offset;
    if (skipped) this.tail.reset();
    const bytes = await this.o.files.read(this.o.path, start, st.size);
    this.tail.push(bytes, skipped);
    this.offset = start + bytes.length;
    return true;
  }
}
