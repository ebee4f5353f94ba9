/**
 * A fake {@link Ipmi} for unit tests and the simulator: an in-memory chassis per BMC host, time from
 * a Clock (a VirtualClock in tests), failure knobs, and a record of every call. It never records or
 * reports a password.
 */
import type { Clock } from '@pvc/runtime';
import { bmcName, DEFAULT_IPMI_TIMEOUT_MS, IpmiError } from './ipmi.js';
import type { Ipmi, IpmiCallOptions, IpmiErrorCode, IpmiOperation, IpmiTarget, PowerState } from './ipmi.js';

/** A failure knob: `true` = every call fails, a number = only the next N calls fail. */
export type FailKnob = boolean | number;

/** Failure knobs; they may be changed between calls. */
export interface FakeIpmiKnobs {
  /** Every call waits its whole timeout, then fails IPMI_UNREACHABLE (a silent BMC). */
  unreachable?: boolean;
  /** `power off` is refused (IPMI_REJECTED) and the chassis stays as it was. */
  powerOffFails?: FailKnob;
  /** `power on` is refused (IPMI_REJECTED) and the chassis stays as it was. */
  powerOnFails?: FailKnob;
  /** `power status` always answers "on", whatever the chassis does (a lying BMC). */
  statusLiesOn?: boolean;
  /** Every call takes this long; a call whose timeout is shorter fails IPMI_UNREACHABLE at its timeout. */
  latencyMs?: number;
  /** The chassis really goes off this long after an accepted `power off` (default 0: at once). */
  offDelayMs?: number;
  /** When set, a call with another password fails IPMI_AUTH. */
  password?: string;
}

/** One recorded call: what was asked and how it ended (never the password). */
export interface FakeIpmiCall {
  op: IpmiOperation;
  bmc: string;
  at: number;
  result: PowerState | 'ok' | IpmiErrorCode;
}

interface Chassis {
  state: PowerState;
  pending?: { state: PowerState; at: number };
}

/** The fake. `power(host)` is the truth; `powerStatus` is what the BMC says (see `statusLiesOn`). */
export class FakeIpmi implements Ipmi {
  readonly calls: FakeIpmiCall[] = [];
  knobs: FakeIpmiKnobs;
  private readonly chassis = new Map<string, Chassis>();

  constructor(
    private readonly clock: Clock,
    knobs: FakeIpmiKnobs = {},
  ) {
    this.knobs = { ...knobs };
  }

  /** The real chassis state of a BMC host (default on). */
  power(host: string): PowerState {
    const c = this.chassis.get(host);
    if (c === undefined) return 'on';
    if (c.pending !== undefined && this.clock.now() >= c.pending.at) {
      c.state = c.pending.state;
      c.pending = undefined;
    }
    return c.state;
  }

  /** Sets the real chassis state (test setup). */
  setPower(host: string, state: PowerState): void {
    this.chassis.set(host, { state });
  }

  /** Operations called so far, e.g. ['power off', 'power status', …]. */
  ops(): IpmiOperation[] {
    return this.calls.map((c) => c.op);
  }

  async powerStatus(target: IpmiTarget, opts?: IpmiCallOptions): Promise<PowerState> {
    await this.enter(target, 'power status', opts);
    const state = this.knobs.statusLiesOn ? 'on' : this.power(target.host);
    this.record(target, 'power status', state);
    return state;
  }

  async powerOff(target: IpmiTarget, opts?: IpmiCallOptions): Promise<void> {
    await this.enter(target, 'power off', opts);
    this.control(target, 'power off', 'off', 'powerOffFails', this.knobs.offDelayMs ?? 0);
  }

  async powerOn(target: IpmiTarget, opts?: IpmiCallOptions): Promise<void> {
    await this.enter(target, 'power on', opts);
    this.control(target, 'power on', 'on', 'powerOnFails', 0);
  }

  private control(target: IpmiTarget, op: IpmiOperation, to: PowerState, knob: 'powerOffFails' | 'powerOnFails', delayMs: number): void {
    if (this.consume(knob)) {
      this.fail(target, op, 'IPMI_REJECTED', 'BMC refused the command (Unspecified error)');
    }
    const current = this.power(target.host);
    if (delayMs > 0 && current !== to) {
      this.chassis.set(target.host, { state: current, pending: { state: to, at: this.clock.now() + delayMs } });
    } else {
      this.chassis.set(target.host, { state: to });
    }
    this.record(target, op, 'ok');
  }

  /** Latency, unreachability and credentials, common to every call. */
  private async enter(target: IpmiTarget, op: IpmiOperation, opts: IpmiCallOptions = {}): Promise<void> {
    const timeoutMs = opts.timeoutMs ?? DEFAULT_IPMI_TIMEOUT_MS;
    const latency = this.knobs.unreachable ? Infinity : (this.knobs.latencyMs ?? 0);
    if (latency > timeoutMs) {
      await this.clock.sleep(timeoutMs, opts.signal);
      this.fail(target, op, 'IPMI_UNREACHABLE', `no answer within ${timeoutMs} ms`);
    }
    if (latency > 0) await this.clock.sleep(latency, opts.signal);
    if (this.knobs.password !== undefined && target.pass !== this.knobs.password) {
      this.fail(target, op, 'IPMI_AUTH', 'wrong password (RAKP 2 HMAC is invalid)');
    }
  }

  private consume(knob: 'powerOffFails' | 'powerOnFails'): boolean {
    const v = this.knobs[knob];
    if (typeof v === 'number') {
      if (v <= 0) return false;
      this.knobs[knob] = v - 1;
      return true;
    }
    return v === true;
  }

  private fail(target: IpmiTarget, op: IpmiOperation, code: IpmiErrorCode, detail: string): never {
    this.record(target, op, code);
    throw new IpmiError(code, bmcName(target), op, detail);
  }

  private record(target: IpmiTarget, op: IpmiOperation, result: FakeIpmiCall['result']): void {
    this.calls.push({ op, bmc: bmcName(target), at: this.clock.now(), result });
  }
}
