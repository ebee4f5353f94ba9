import type { Exec, ExecChild, ExecOptions, ExecResult } from '../exec.js';

/** A recorded call to the fake. */
export interface ExecCall {
  command: string;
  args: string[];
}

type Responder = (call: ExecCall, opts: ExecOptions) => ExecResult | Promise<ExecResult>;

/**
 * Fake Exec for unit tests: responders are matched by a prefix of `command args…`; the first that
 * matches answers. Unmatched commands exit 127 ("not found"), as a shell would.
 */
export class FakeExec implements Exec {
  readonly calls: ExecCall[] = [];
  private readonly responders: { prefix: string; respond: Responder }[] = [];

  /** Answers commands whose joined line starts with `prefix`. Later registrations win. */
  on(prefix: string, respond: Responder | Partial<ExecResult>): this {
    const fn: Responder =
      typeof respond === 'function' ? respond : () => ({ exitCode: 0, stdout: '', stderr: '', ...respond });
    this.responders.unshift({ prefix, respond: fn });
    return this;
  }

  async run(command: string, args: readonly string[], opts: ExecOptions = {}): Promise<ExecResult> {
    const call = { command, args: [...args] };
    this.calls.push(call);
    const line = [command, ...args].join(' ');
    const r = this.responders.find((x) => line.startsWith(x.prefix));
    if (!r) return { exitCode: 127, stdout: '', stderr: `${command}: command not found\n` };
    return r.respond(call, opts);
  }

  spawn(command: string, args: readonly string[]): ExecChild {
    this.calls.push({ command, args: [...args] });
    const listeners: ((l: string) => void)[] = [];
    let finish: (code: number) => void = () => undefined;
    const exited = new Promise<number>((r) => (finish = r));
    return {
      pid: undefined,
      onLine: (fn) => listeners.push(fn),
      exited,
      kill: () => finish(143),
    };
  }

  /** Command lines run so far, for assertions. */
  lines(): string[] {
    return this.calls.map((c) => [c.command, ...c.args].join(' '));
  }
}
