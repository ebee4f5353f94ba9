import { describeError, humanLine, type Clock } from '@pvc/runtime';
import { ZkLockError } from './errors.js';
import { createLock, type KazooLock } from './lock.js';
import { locks, paths } from './schema.js';
import type { Unsubscribe, ZkClient } from './types.js';

/**
 * Life cycle of a {@link ZkLogSink}.
 * - `waiting`: no ZK client attached yet (lines are buffered).
 * - `writing`: the last write reached Zookeeper.
 * - `failing`: the last write failed or the session is not connected (lines are buffered).
 * - `closed`: {@link ZkLogSink.close} was called; lines are ignored.
 */
export type ZkLogSinkState = 'waiting' | 'writing' | 'failing' | 'closed';

/** Options of a {@link ZkLogSink}. */
export interface ZkLogSinkOptions {
  /** Daemon name; every line starts with `<service>: `. */
  service: string;
  /** This node's name: lines go to `/logs/<node>/messages`. */
  node: string;
  clock: Clock;
  /** `node_log_lines`: the key keeps this many of the newest lines (≥ 1). */
  maxLines: number;
  /** Milliseconds between writes of the buffered lines (default 1000). */
  intervalMs?: number;
  /** Lines kept while Zookeeper is unreachable; older ones are dropped and counted (default 5000). */
  bufferLines?: number;
  /** Give up waiting for the node log's WriteLock after this long and retry later (default 5000). */
  lockTimeoutMs?: number;
  /** Deadline of each ZK request (default 5000). */
  opTimeoutMs?: number;
  /** Longer lines are cut to this many characters (default 2000). */
  maxLineChars?: number;
  /**
   * Called once per state change. It must not log synchronously in a way that fails: what it logs
   * lands in this sink's buffer and is written with the next batch (one line per change, no loop).
   */
  onStateChange?: (state: ZkLogSinkState, detail: { error?: string; dropped?: number }) => void;
}

/** Counters of a sink, for tests and status. */
export interface ZkLogSinkStats {
  readonly state: ZkLogSinkState;
  readonly buffered: number;
  readonly dropped: number;
  readonly written: number;
}

/** Zookeeper's default jute.maxbuffer is 1 MiB; stay well under it whatever the lines hold. */
const MAX_VALUE_BYTES = 900_000;
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*[A-Za-z]`, 'g');

/**
 * The node log in Zookeeper, like the original's ZK logger thread: a pino destination that turns
 * each JSON line into the human form without colours (`<service>: <time> LEVEL msg key=value…`),
 * buffers it, and every `intervalMs` appends the buffer to `/logs/<node>/messages` under the
 * kazoo-compatible WriteLock on that key (so every daemon of a node, ours or Python, appends in
 * turn), keeping the newest `maxLines` lines. `/logs/<node>` is created at the first write.
 *
 * Never blocks or throws into the logger: writes run in the background, a lock wait is bounded,
 * and while Zookeeper is unreachable the buffer keeps at most `bufferLines` lines, dropping the
 * oldest; the first successful write after that starts with a line saying how many were dropped.
 * Passwords never get here: pino's redaction has already been applied to the JSON line.
 */
export class ZkLogSink {
  private readonly opts: Required<Omit<ZkLogSinkOptions, 'onStateChange'>> & Pick<ZkLogSinkOptions, 'onStateChange'>;
  private buffer: string[] = [];
  private inflight: string[] = [];
  private dropped = 0;
  private written = 0;
  private current: ZkLogSinkState = 'waiting';
  private zk: ZkClient | undefined;
  private lock: KazooLock | undefined;
  private rootEnsured = false;
  private unsubscribe: Unsubscribe[] = [];
  private stopTimer: (() => void) | undefined;
  private running: Promise<void> | undefined;
  private stopping = new AbortController();

  constructor(opts: ZkLogSinkOptions) {
    this.opts = { intervalMs: 1000, bufferLines: 5000, lockTimeoutMs: 5000, opTimeoutMs: 5000, maxLineChars: 2000, ...opts };
    paths.logs.node(opts.node); // validates the node name now rather than at the first write
  }

  /** Current state and counters. */
  get stats(): ZkLogSinkStats {
    return { state: this.current, buffered: this.buffer.length + this.inflight.length, dropped: this.dropped, written: this.written };
  }

  /** pino destination: one or more JSON lines. Never throws. */
  write(chunk: string): void {
    if (this.current === 'closed') return;
    for (const line of chunk.split('\n')) {
      if (line.trim() === '') continue;
      try {
        this.push(this.format(line));
      } catch {
        // A line we cannot render is not worth a failure in the caller's logging.
      }
    }
  }

  /**
   * Starts writing through `zk` (replacing an earlier client). Writing stops by itself when that
   * client is closed; call {@link flush} first to write the last lines.
   */
  attach(zk: ZkClient): void {
    if (this.current === 'closed') return;
    this.detach();
    this.zk = zk;
    this.lock = createLock(zk, locks.nodeLog(this.opts.node), { clock: this.opts.clock });
    this.rootEnsured = false;
    this.unsubscribe = [zk.on('closed', () => this.detach())];
    this.stopTimer = this.opts.clock.every(this.opts.intervalMs, () => (this.running ? undefined : void this.flush()));
    void this.flush();
  }

  /**
   * Writes what is buffered now (waiting for a write already under way first). Resolves, never
   * rejects, within about `lockTimeoutMs` + 2 × `opTimeoutMs`.
   */
  async flush(): Promise<void> {
    while (this.running) await this.running;
    this.running = this.cycle().finally(() => (this.running = undefined));
    await this.running;
  }

  /** Writes what is buffered (bounded, see {@link flush}), then stops for good. */
  async close(): Promise<void> {
    if (this.current === 'closed') return;
    await this.flush();
    this.stopping.abort();
    this.detach();
    this.current = 'closed';
    this.buffer = [];
  }

  private detach(): void {
    for (const u of this.unsubscribe) u();
    this.unsubscribe = [];
    this.stopTimer?.();
    this.stopTimer = undefined;
    this.zk = undefined;
    this.lock = undefined;
  }

  private format(json: string): string {
    const time = new Date(this.opts.clock.now()).toISOString();
    const body = humanLine(json, false, { omitService: true, fallbackTime: time })
      .replace(/\n$/, '')
      .replace(ANSI, '')
      .replace(/\r?\n/g, '\\n');
    const max = this.opts.maxLineChars;
    return `${this.opts.service}: ${body.length > max ? `${body.slice(0, max)}…` : body}`;
  }

  private push(line: string): void {
    this.buffer.push(line);
    while (this.buffer.length > 0 && this.buffer.length + this.inflight.length > this.opts.bufferLines) {
      this.buffer.shift();
      this.dropped++;
    }
  }

  /** One write of the buffer. Everything that can fail is caught here. */
  private async cycle(): Promise<void> {
    const { zk, lock } = this;
    if (!zk || !lock || this.current === 'closed') return;
    if (this.buffer.length === 0 && this.rootEnsured) return;
    if (zk.state !== 'connected') {
      // Not worth a line while the first session is still being set up.
      if (this.current === 'writing') this.setState('failing', { error: `Zookeeper session ${zk.state}` });
      return;
    }
    const dropped = this.dropped;
    this.inflight = this.buffer;
    this.buffer = [];
    const lines = dropped > 0 ? [this.dropNotice(dropped), ...this.inflight] : this.inflight;
    try {
      await this.ensureRoot(zk);
      if (lines.length > 0) await this.append(zk, lock, lines);
      this.written += this.inflight.length;
      this.inflight = [];
      this.dropped -= dropped;
      this.setState('writing', dropped > 0 ? { dropped } : {});
    } catch (err) {
      this.requeue();
      this.setState('failing', { error: describeError(err) });
    }
  }

  private async ensureRoot(zk: ZkClient): Promise<void> {
    if (this.rootEnsured) return;
    await zk.ensurePath(paths.logs.node(this.opts.node).root, this.op());
    this.rootEnsured = true;
  }

  /** Read, append, trim and write the key while holding its WriteLock. */
  private async append(zk: ZkClient, lock: KazooLock, lines: readonly string[]): Promise<void> {
    const key = paths.logs.node(this.opts.node).messages;
    const got = await lock.acquire({ timeoutMs: this.opts.lockTimeoutMs, signal: this.stopping.signal });
    if (!got) throw new ZkLockError(`the WriteLock on ${key} was not free within ${this.opts.lockTimeoutMs} ms`);
    try {
      const { data, stat } = await zk.get(key, this.op());
      await zk.set(key, appendTrimmed(data, lines, this.opts.maxLines), { ...this.op(), version: stat.version });
    } finally {
      await lock.release().catch(() => undefined);
    }
  }

  /** Puts an unwritten batch back in front of newer lines, within the buffer bound. */
  private requeue(): void {
    const all = [...this.inflight, ...this.buffer];
    this.inflight = [];
    const excess = Math.max(0, all.length - this.opts.bufferLines);
    this.dropped += excess;
    this.buffer = all.slice(excess);
  }

  private dropNotice(n: number): string {
    const msg = `${n} log line${n === 1 ? '' : 's'} dropped while Zookeeper could not be written (buffer of ${this.opts.bufferLines} lines)`;
    return this.format(JSON.stringify({ level: 40, msg }));
  }

  private op(): { timeoutMs: number; signal: AbortSignal } {
    return { timeoutMs: this.opts.opTimeoutMs, signal: this.stopping.signal };
  }

  private setState(state: ZkLogSinkState, detail: { error?: string; dropped?: number }): void {
    if (state === this.current && detail.dropped === undefined) return;
    this.current = state;
    try {
      this.opts.onStateChange?.(state, detail);
    } catch {
      // A listener's failure must not stop the log.
    }
  }
}

/**
 * The original's append-and-trim of the node log: `existing` (newline-joined, `""` when empty)
 * plus `lines`, keeping the newest `maxLines` lines and staying under ZK's value size limit.
 */
export function appendTrimmed(existing: string, lines: readonly string[], maxLines: number): string {
  const all = existing === '' ? [...lines] : [...existing.split('\n'), ...lines];
  let kept = all.slice(Math.max(0, all.length - maxLines));
  let bytes = kept.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0);
  let cut = 0;
  while (bytes > MAX_VALUE_BYTES && cut < kept.length - 1) bytes -= Buffer.byteLength(kept[cut++] ?? '') + 1;
  if (cut > 0) kept = kept.slice(cut);
  return kept.join('\n');
}
