import type { ProcessExit, ProcessHandle, ProcessPort, ProcessSpec } from './process-port.js';

/** A child of the fake: tests end it with {@link FakeProcess.exit}. */
export class FakeProcess implements ProcessHandle {
  readonly signals: NodeJS.Signals[] = [];
  private finish: (e: ProcessExit) => void = () => undefined;
  readonly exited: Promise<ProcessExit>;
  ended = false;

  constructor(
    readonly spec: ProcessSpec,
    readonly pid: number,
    private readonly port: FakeProcessPort,
  ) {
    this.exited = new Promise((r) => (this.finish = r));
  }

  /** Ends the child as if it exited (or was killed, with `signal`). */
  exit(code: number | null, signal: NodeJS.Signals | null = null): void {
    if (this.ended) return;
    this.ended = true;
    this.port.log.push(`exit ${this.spec.name} ${signal ?? code}`);
    this.finish({ code, signal });
  }

  kill(signal: NodeJS.Signals): void {
    if (this.ended) return;
    this.signals.push(signal);
    this.port.log.push(`kill ${this.spec.name} ${signal}`);
    if (signal === 'SIGKILL' || !this.port.ignoreTerm.has(this.spec.name)) this.exit(null, signal);
  }
}

/**
 * Fake process port for unit tests: records spawns and signals in `log`; a child ends on SIGTERM
 * unless its name is in `ignoreTerm`; `failSpawn` makes the next spawns of a name fail to start.
 */
export class FakeProcessPort implements ProcessPort {
  readonly log: string[] = [];
  readonly children: FakeProcess[] = [];
  readonly ignoreTerm = new Set<string>();
  readonly failSpawn = new Map<string, number>();
  private nextPid = 1000;

  spawn(spec: ProcessSpec): ProcessHandle {
    const p = new FakeProcess(spec, this.nextPid++, this);
    this.children.push(p);
    this.log.push(`spawn ${spec.name}`);
    const fails = this.failSpawn.get(spec.name) ?? 0;
    if (fails > 0) {
      this.failSpawn.set(spec.name, fails - 1);
      p.ended = true;
      return { pid: undefined, exited: Promise.resolve({ code: null, signal: null, error: 'spawn ENOENT' }), kill: () => undefined };
    }
    return p;
  }

  /** The newest child of `name`. */
  latest(name: string): FakeProcess {
    const p = [...this.children].reverse().find((c) => c.spec.name === name);
    if (!p) throw new Error(`no child ${name} spawned`);
    return p;
  }
}
