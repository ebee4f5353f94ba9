import { createLogger, type Logger } from '@pvc/runtime';
import type { KeyReadOptions } from '@pvc/zk';

/**
 * Bad data in Zookeeper, shown rather than crashed on. The key readers of `@pvc/zk` report a
 * stored value their codec rejects to a logger (once per key and value in a process) and read the
 * key's fallback; a `Problems` is such a logger for one object being shown (a node, a VM, a fault,
 * the cluster's keys): each report becomes one line (`bad value in Zookeeper at <key>: "<value>"
 * is not <format>; using the default`) that the command prints with the object. Reads that pass
 * no logger report to the CLI's warning logger (`pvc: warning: ...` on stderr, see `cli.ts`).
 */
export class Problems {
  readonly list: string[] = [];
  readonly logger: Logger;

  constructor() {
    this.logger = lineLogger((text) => this.list.push(text));
  }

  /** Options for `readKey`/`readKeys`/`readKeyIfExists`/`readKeyWithStat`. */
  get opts(): KeyReadOptions {
    return { logger: this.logger };
  }

  add(text: string): void {
    this.list.push(text);
  }
}

/** A logger whose every line reaches `sink` as its message (with the key, when the line names one). */
export function lineLogger(sink: (text: string) => void): Logger {
  return createLogger({ service: 'pvc', dates: false, destination: { write: (line: string) => sink(messageOf(line)) } });
}

function messageOf(line: string): string {
  try {
    const o = JSON.parse(line) as { msg?: unknown; key?: unknown };
    const msg = typeof o.msg === 'string' ? o.msg : line.trim();
    return typeof o.key === 'string' && !msg.includes(o.key) ? `${msg} (${o.key})` : msg;
  } catch {
    return line.trim();
  }
}
