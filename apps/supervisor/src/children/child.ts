import { AbortedError, type Clock, type Logger } from '@pvc/runtime';
import { describeExit, type ProcessExit, type ProcessHandle, type ProcessPort, type ProcessSpec } from '../host/process-port.js';
import { recentCrashes, restartDelay, type RestartPolicy } from './backoff.js';

/**
 * Life cycle of one child service:
 * `starting` → `running` ⇄ (`backoff` | `crash-loop`) → … ; `stopping` → `stopped`.
 * `crash-loop` is kept (also while the child is up again) until it has run stably for
 * `stableAfterMs`, so a loop stays visible in ListServices between crashes.
 */
export type ChildState = 'starting' | 'running' | 'backoff' | 'crash-loop' | 'stopping' | 'stopped';

/** What ListServices reports for one child. */
export interface ChildSnapshot {
  name: string;
  state: ChildState;
  pid: number;
  restarts: number;
  lastExit: string;
}

/** Deps of a {@link ChildService}. */
export interface ChildDeps {
  readonly spec: ProcessSpec;
  readonly processes: ProcessPort;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly policy: RestartPolicy;
}

/** Supervises one child: restarts it after a failure with exponential backoff; reports crash loops. */
export class ChildService {
  private state: ChildState = 'starting';
  private handle: ProcessHandle | undefined;
  private restarts = 0;
  private lastExit = '';
  private crashes: number[] = [];
  private consecutive = 0;
  private inLoop = false;
  private readonly stopper = new AbortController();
  private loop: Promise<void> | undefined;
  private readonly log: Logger;

  constructor(private readonly deps: ChildDeps) {
    this.log = deps.logger.child({ component: 'children', child: deps.spec.name });
  }

  get name(): string {
    return this.deps.spec.name;
  }

  snapshot(): ChildSnapshot {
    return { name: this.name, state: this.state, pid: this.handle?.pid ?? 0, restarts: this.restarts, lastExit: this.lastExit };
  }

  /** Starts the child and keeps it running until {@link ChildService.stop}. */
  start(): void {
    this.loop ??= this.run().catch((err: unknown) => {
      if (!(err instanceof AbortedError)) this.log.error({ err: String(err) }, 'child supervision failed');
    });
  }

  /** Sends a signal to the running child (e.g. SIGHUP to reopen its log file). */
  signal(sig: NodeJS.Signals): void {
    this.handle?.kill(sig);
  }

  private transition(next: ChildState, reason: string, fields: Record<string, unknown> = {}): void {
    if (this.state === next) return;
    const level = next === 'crash-loop' ? 'error' : 'info';
    this.log[level]({ from: this.state, to: next, reason, ...fields }, `${this.name}: ${next}`);
    this.state = next;
  }

  private async run(): Promise<void> {
    const { clock, policy } = this.deps;
    while (!this.stopper.signal.aborted) {
      const exit = await this.runOnce();
      if (this.stopper.signal.aborted) return;
      this.lastExit = describeExit(exit);
      if (exit.code === 0) {
        this.transition('stopped', 'exited by itself with status 0 (not restarted, like Restart=on-failure)');
        return;
      }
      const now = clock.now();
      this.crashes = [...recentCrashes(policy, this.crashes, now), now];
      this.consecutive++;
      const delay = restartDelay(policy, this.consecutive);
      if (this.crashes.length >= policy.crashLoopCount) this.inLoop = true;
      const fields = { exit: this.lastExit, restartInMs: delay, crashesInWindow: this.crashes.length };
      this.transition(this.inLoop ? 'crash-loop' : 'backoff', 'child failed', fields);
      if (this.inLoop) this.log.error(fields, `${this.name} is crash-looping`);
      await clock.sleep(delay, this.stopper.signal);
      this.restarts++;
    }
  }

  /** One life of the child: spawn, note stability, wait for its end. */
  private async runOnce(): Promise<ProcessExit> {
    const { clock, policy, processes, spec } = this.deps;
    const handle = processes.spawn(spec);
    this.handle = handle;
    if (!this.inLoop) this.transition('running', this.restarts === 0 ? 'started' : 'restarted', { pid: handle.pid });
    else this.log.info({ pid: handle.pid }, `${this.name} restarted (still in a crash loop)`);
    const stable = new AbortController();
    const stability = clock.sleep(policy.stableAfterMs, stable.signal).then(
      () => {
        this.consecutive = 0;
        if (this.inLoop) {
          this.inLoop = false;
          this.transition('running', `stable for ${policy.stableAfterMs} ms: crash loop over`);
        }
      },
      () => undefined,
    );
    const exit = await handle.exited;
    stable.abort();
    await stability;
    return exit;
  }

  /** Stops the child: SIGTERM, then SIGKILL after `stopTimeoutMs`. Resolves when it has ended. */
  async stop(): Promise<void> {
    this.stopper.abort(new Error('stop'));
    const handle = this.handle;
    this.transition('stopping', 'supervisor stopping');
    if (handle) {
      handle.kill('SIGTERM');
      const timer = new AbortController();
      const inTime = await Promise.race([
        handle.exited.then(() => true),
        this.deps.clock.sleep(this.deps.policy.stopTimeoutMs, timer.signal).then(() => false, () => true),
      ]);
      timer.abort();
      if (!inTime) {
        this.log.warn({ pid: handle.pid, afterMs: this.deps.policy.stopTimeoutMs }, `${this.name} ignored SIGTERM: SIGKILL`);
        handle.kill('SIGKILL');
      }
      const exit = await handle.exited;
      this.lastExit = describeExit(exit);
    }
    await this.loop;
    this.transition('stopped', 'stopped by the supervisor', { exit: this.lastExit });
  }
}
