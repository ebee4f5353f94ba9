import { spawn } from 'node:child_process';
import { onLines } from './lines.js';

/** Options of {@link lifecycleEvents}. */
export interface LifecycleEventOptions {
  /** Command line before `virsh` (e.g. `['ip', 'netns', 'exec', '<ns>']` for a harness host). */
  prefix?: readonly string[];
  /** The timestamp taken when a line arrives (default `performance.now()`). */
  now?: () => number;
}

/** One `virsh event --loop --event lifecycle` stream. */
export interface LifecycleEvents {
  /** Arrival time of each domain's latest `Started` event, by domain name. */
  readonly started: Map<string, number>;
  /** Resolves with the arrival time of the next `<what>` event (`Started`, `Stopped`, …) of `name`. */
  next(name: string, what: string): Promise<number>;
  clear(): void;
  close(): void;
}

/**
 * libvirt's lifecycle events of one libvirtd, stamped on arrival: the moment a domain started, as
 * libvirt says it, without polling (a `virsh list` waits while other domains are being started:
 * it locks each domain object). Used by the VM start benchmarks and the burst test.
 */
export function lifecycleEvents(uri: string, opts: LifecycleEventOptions = {}): LifecycleEvents {
  const now = opts.now ?? (() => performance.now());
  const [cmd, ...pre] = [...(opts.prefix ?? []), 'virsh'];
  const child = spawn(cmd!, [...pre, '-c', uri, 'event', '--loop', '--event', 'lifecycle'], { stdio: ['ignore', 'pipe', 'ignore'] });
  const started = new Map<string, number>();
  const waiters: { name: string; what: string; resolve: (t: number) => void }[] = [];
  onLines(child.stdout, (line) => {
    const t = now();
    const m = /for domain '([^']+)': (\w+)/.exec(line);
    if (!m?.[1]) return;
    if (m[2] === 'Started') started.set(m[1], t);
    for (const w of waiters.splice(0)) {
      if (w.name === m[1] && w.what === m[2]) w.resolve(t);
      else waiters.push(w);
    }
  });
  return {
    started,
    next: (name, what) => new Promise((resolve) => waiters.push({ name, what, resolve })),
    clear: () => started.clear(),
    close: () => void child.kill('SIGTERM'),
  };
}
