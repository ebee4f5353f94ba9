import type { Clock, Logger } from '@pvc/runtime';
import type { ProcessPort, ProcessSpec } from '../host/process-port.js';
import type { RestartPolicy } from './backoff.js';
import { ChildService, type ChildSnapshot } from './child.js';

/** The services the supervisor runs, in start order. */
export const CHILD_SERVICES = ['netd', 'vmd', 'cephd', 'keepaliled'] as const;
export type ChildName = (typeof CHILD_SERVICES)[number];

/**
 * Stop order: keepaliled first (it relinquishes the primary role while the others still serve
 * it), then vmd, netd, cephd (VMs keep running: vmd does not stop them on exit).
 */
export const STOP_ORDER: readonly ChildName[] = ['keepaliled', 'vmd', 'netd', 'cephd'];

/** The children of a standalone supervisor. */
export class ChildGroup {
  private readonly children: Map<string, ChildService>;

  constructor(
    specs: readonly ProcessSpec[],
    deps: { processes: ProcessPort; clock: Clock; logger: Logger; policy: RestartPolicy },
  ) {
    this.children = new Map(specs.map((spec) => [spec.name, new ChildService({ ...deps, spec })]));
  }

  /** Starts every child (in the order given), without waiting for them. */
  startAll(): void {
    for (const c of this.children.values()) c.start();
  }

  /** Stops the children one after another in {@link STOP_ORDER} (unknown names last). */
  async stopAll(): Promise<void> {
    const rank = (n: string): number => {
      const i = STOP_ORDER.indexOf(n as ChildName);
      return i === -1 ? STOP_ORDER.length : i;
    };
    for (const c of [...this.children.values()].sort((a, b) => rank(a.name) - rank(b.name))) await c.stop();
  }

  /** Forwards a signal (SIGHUP: reopen log files) to every running child. */
  signalAll(sig: NodeJS.Signals): void {
    for (const c of this.children.values()) c.signal(sig);
  }

  snapshots(): ChildSnapshot[] {
    return [...this.children.values()].map((c) => c.snapshot());
  }
}
