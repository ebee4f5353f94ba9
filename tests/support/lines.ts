import type { Readable } from 'node:stream';

/** Calls `fn` with each complete line a child's output stream delivers, as it arrives. */
export function onLines(stream: Readable, fn: (line: string) => void): void {
  let buf = '';
  stream.setEncoding('utf8');
  stream.on('data', (d: string) => {
    buf += d;
    const lines = buf.split('\n');
    buf = lines.pop() ?? '';
    for (const l of lines) fn(l);
  });
}
