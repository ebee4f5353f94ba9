/**
 * A pinger in a network namespace for loss measurements: `ping -n -D -i 0.02 -W 1 <target>` (every
 * 20 ms, root only), each answer recorded with its epoch ms and ICMP sequence number. Loss in a
 * window = the sequence numbers missing between the answers around it; the longest gap = the
 * longest time between two consecutive answers (the answers just outside the window count as
 * bounds, so an outage that starts inside is measured to its end).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { onLines } from './lines.js';

/** One answer. */
export interface PingReply {
  at: number;
  seq: number;
}

/** Figures of one window. */
export interface LossFigures {
  /** Requests in the window (answers in it + lost ones) and how many got no answer. */
  sent: number;
  lost: number;
  longestGapMs: number;
  /** Epoch ms of the answer that opened the longest gap. */
  gapAt: number;
}

/** Pings `target` from `netns` every `intervalS` seconds (default 0.02) until `stop()`. */
export class PingProber {
  readonly replies: PingReply[] = [];
  private child: ChildProcess | undefined;

  constructor(readonly netns: string, readonly target: string, private readonly intervalS = 0.02) {}

  start(): void {
    // -D: each reply line starts with [epoch.micros]; stdbuf: one line per reply as it comes.
    this.child = spawn('ip', ['netns', 'exec', this.netns, 'stdbuf', '-oL', 'ping', '-n', '-D', '-i', String(this.intervalS), '-W', '1', this.target], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    onLines(this.child.stdout!, (l) => {
      const m = /^\[(\d+\.\d+)\] \d+ bytes from .* icmp_seq=(\d+)/.exec(l);
      if (m) this.replies.push({ at: Math.round(Number(m[1]) * 1000), seq: Number(m[2]) });
    });
  }

  stop(): void {
    this.child?.kill('SIGKILL');
  }

  /** Answers at or after `t`. */
  answersSince(t: number): number {
    return this.replies.filter((r) => r.at >= t).length;
  }

  /** Loss and longest gap in [from, to]. */
  figures(from: number, to: number): LossFigures {
    const before = this.replies.filter((r) => r.at < from).at(-1);
    const inside = this.replies.filter((r) => r.at >= from && r.at <= to);
    const after = this.replies.find((r) => r.at > to);
    const series = [...(before ? [before] : []), ...inside, ...(after ? [after] : [])];
    let lost = 0;
    let best = { gap: 0, at: from };
    for (let i = 1; i < series.length; i++) {
      const [a, b] = [series[i - 1]!, series[i]!];
      lost += Math.max(0, b.seq - a.seq - 1);
      if (b.at - a.at > best.gap) best = { gap: b.at - a.at, at: a.at };
    }
    return { sent: inside.length + lost, lost, longestGapMs: best.gap, gapAt: best.at };
  }
}

/** "lost 3/250 (1.2 %), longest gap 80 ms" */
export function formatLoss(f: LossFigures): string {
  const pct = f.sent > 0 ? ((100 * f.lost) / f.sent).toFixed(1) : '0.0';
  return `lost ${f.lost}/${f.sent} (${pct} %), longest gap ${f.longestGapMs} ms`;
}
