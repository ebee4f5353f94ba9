/**
 * Fakes of the dnsmasq manager's ports: an Exec whose spawned children exit when told to (or on
 * the signals a real dnsmasq obeys), and a host that records what would be written.
 */
import type { Exec, ExecChild, ExecResult } from '@pvc/runtime';
import type { DnsmasqHost } from '../host-files.js';
import type { Reservation } from '../reservations.js';

/** One spawned fake dnsmasq. */
export interface FakeChild extends ExecChild {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Record<string, string> | undefined;
  readonly signals: NodeJS.Signals[];
  /** Makes the child exit with `code` (a crash, or a start failure). */
  exit(code: number): void;
  /** True once it exited. */
  readonly done: boolean;
}

/** Exec whose `spawn` makes {@link FakeChild}ren. `ignoreTerm` children only die of SIGKILL. */
export class FakeDnsmasqExec implements Exec {
  readonly children: FakeChild[] = [];
  ignoreTerm = false;
  /** The next this many spawns exit at once with code 2 (a start failure). */
  failStart = 0;
  private nextPid = 1000;

  run(): Promise<ExecResult> {
    return Promise.resolve({ exitCode: 127, stdout: '', stderr: 'not in this fake' });
  }

  spawn(command: string, args: readonly string[], opts: { env?: Record<string, string> } = {}): ExecChild {
    let finish: (code: number) => void = () => undefined;
    let done = false;
    const exited = new Promise<number>((r) => (finish = r));
    const exit = (code: number): void => {
      if (done) return;
      done = true;
      finish(code);
    };
    const signals: NodeJS.Signals[] = [];
    const ignoreTerm = this.ignoreTerm;
    const child: FakeChild = {
      get done() {
        return done;
      },
      pid: this.nextPid++,
      command,
      args: [...args],
      env: opts.env,
      signals,
      exited,
      exit,
      onLine: () => undefined,
      kill: (signal: NodeJS.Signals = 'SIGTERM') => {
        signals.push(signal);
        if (signal === 'SIGKILL' || (signal === 'SIGTERM' && !ignoreTerm)) exit(-1);
      },
    };
    this.children.push(child);
    if (this.failStart > 0) {
      this.failStart -= 1;
      queueMicrotask(() => exit(2));
    }
    return child;
  }

  /** Children that have not exited. */
  live(): FakeChild[] {
    return this.children.filter((c) => !c.done);
  }
}

/** A host that keeps reservations in memory and logs its calls. */
export class FakeDnsmasqHost implements DnsmasqHost {
  readonly calls: string[] = [];
  files = new Map<string, string>();
  leftover: number | undefined;
  readonly signalled: [number, NodeJS.Signals | 0][] = [];
  leftoverAlive = false;

  prepare(): Promise<void> {
    this.calls.push('prepare');
    return Promise.resolve();
  }

  syncReservations(_vni: string, _layout: unknown, wanted: readonly Reservation[]): Promise<boolean> {
    const next = new Map(wanted.map((r) => [r.mac, `${r.mac},${r.ipaddr}`]));
    const changed = next.size !== this.files.size || [...next].some(([k, v]) => this.files.get(k) !== v);
    this.files = next;
    this.calls.push(`sync ${changed}`);
    return Promise.resolve(changed);
  }

  logTail(): Promise<string> {
    return Promise.resolve('dnsmasq: failed to create listening socket for 10.0.0.1: Cannot assign requested address');
  }

  findLeftover(): Promise<number | undefined> {
    return Promise.resolve(this.leftover);
  }

  signal(pid: number, signal: NodeJS.Signals | 0): boolean {
    this.signalled.push([pid, signal]);
    if (signal === 'SIGTERM' || signal === 'SIGKILL') this.leftoverAlive = false;
    return signal === 0 ? this.leftoverAlive : true;
  }

  /** The last `init` leases text written (undefined = removed or never written). */
  initLeases: string | undefined;

  writeInitLeases(_layout: unknown, text: string | undefined): Promise<void> {
    this.initLeases = text;
    this.calls.push(text === undefined ? 'init-leases removed' : `init-leases ${text.split('\n').filter(Boolean).length}`);
    return Promise.resolve();
  }

  removeFiles(): Promise<void> {
    this.calls.push('remove');
    return Promise.resolve();
  }
}
