import { open, stat } from 'node:fs/promises';

/** What the console follower needs to know about a log file between two reads. */
export interface FileStat {
  readonly size: number;
  readonly mtimeMs: number;
  /** Inode number: a new inode at the same path = the file was rotated. */
  readonly ino: number;
}

/**
 * The file-reading port of the console watcher. Real: {@link realConsoleFiles} (node:fs);
 * fake: {@link FakeConsoleFiles}. Both answer `undefined` from `stat` when the file is absent.
 */
export interface ConsoleFiles {
  stat(path: string): Promise<FileStat | undefined>;
  /** Bytes `[start, end)` of the file (fewer when it shrank meanwhile). */
  read(path: string, start: number, end: number): Promise<Buffer>;
}

/** The real file port over node:fs/promises. */
export const realConsoleFiles: ConsoleFiles = {
  async stat(path) {
    try {
      const s = await stat(path);
      return { size: s.size, mtimeMs: s.mtimeMs, ino: s.ino };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  },
  async read(path, start, end) {
    const fh = await open(path, 'r');
    try {
      const buf = Buffer.alloc(Math.max(0, end - start));
      const { bytesRead } = await fh.read(buf, 0, buf.length, start);
      return buf.subarray(0, bytesRead);
    } finally {
      await fh.close();
    }
  },
};

/** In-memory files for unit tests: `append`, `truncate`, `rotate`, `remove`. */
export class FakeConsoleFiles implements ConsoleFiles {
  private readonly files = new Map<string, { data: Buffer; mtimeMs: number; ino: number }>();
  private nextIno = 1;
  /** Number of `read` calls (tests check that an unchanged file is not re-read). */
  reads = 0;

  constructor(private readonly now: () => number) {}

  append(path: string, text: string): void {
    const f = this.files.get(path);
    const data = Buffer.concat([f?.data ?? Buffer.alloc(0), Buffer.from(text)]);
    this.files.set(path, { data, mtimeMs: this.now(), ino: f?.ino ?? this.nextIno++ });
  }

  truncate(path: string): void {
    const f = this.files.get(path);
    if (f) this.files.set(path, { data: Buffer.alloc(0), mtimeMs: this.now(), ino: f.ino });
  }

  /** Replaces the file by a new one (new inode) holding `text` (logrotate's create mode). */
  rotate(path: string, text = ''): void {
    this.files.set(path, { data: Buffer.from(text), mtimeMs: this.now(), ino: this.nextIno++ });
  }

  remove(path: string): void {
    this.files.delete(path);
  }

  stat(path: string): Promise<FileStat | undefined> {
    const f = this.files.get(path);
    return Promise.resolve(f && { size: f.data.length, mtimeMs: f.mtimeMs, ino: f.ino });
  }

  read(path: string, start: number, end: number): Promise<Buffer> {
    this.reads++;
    const f = this.files.get(path);
    if (!f) return Promise.reject(Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' }));
    return Promise.resolve(Buffer.from(f.data.subarray(start, end)));
  }
}
