import { StringDecoder } from 'node:string_decoder';

/**
 * The last `max` lines of a byte stream fed in pieces: multi-byte characters split between reads
 * are kept whole, `\r` (serial consoles write CRLF) is dropped, and an unfinished last line is
 * shown as it is so far and completed by the next piece.
 */
export class LineTail {
  private lines: string[] = [];
  private partial = '';
  private decoder = new StringDecoder('utf8');

  constructor(private readonly max: number) {}

  /** Adds bytes. `fromMiddle`: the piece starts inside a line whose start was skipped (drop it). */
  push(bytes: Buffer, fromMiddle = false): void {
    let text = this.partial + this.decoder.write(bytes);
    if (fromMiddle) {
      const nl = text.indexOf('\n');
      text = nl < 0 ? '' : text.slice(nl + 1);
    }
    const parts = text.replace(/\r/g, '').split('\n');
    this.partial = parts.pop() ?? '';
    if (this.max <= 0) return;
    if (parts.length > 0) this.lines.push(...parts.slice(-this.max));
    if (this.lines.length > this.max) this.lines = this.lines.slice(-this.max);
  }

  /** Forgets everything (the file was truncated or replaced). */
  reset(): void {
    this.lines = [];
    this.partial = '';
    this.decoder = new StringDecoder('utf8');
  }

  /** The kept lines joined by `\n` (the unfinished last line included). */
  text(): string {
    if (this.max <= 0) return '';
    const all = this.partial === '' ? this.lines : [...this.lines, this.partial];
    return all.slice(-this.max).join('\n');
  }
}
