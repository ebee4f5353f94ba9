/**
 * The primary-coordinator role of a local service: a small state machine that starts and stops the
 * service's primary-only duties when keepaliled calls PrimaryRoleService.SetPrimary.
 * Shared by netd and cephd (both serve PrimaryRoleService).
 */
import { describeError, PvcError, type Logger } from '@pvc/runtime';

/**
 * One primary-only duty (e.g. a floating IP, dnsmasq, Ceph stats writes). `start` must leave the
 * duty fully running or throw; `stop` must release it (it is also called after a failed start of a
 * later duty, and at shutdown).
 */
export interface PrimaryDuty {
  readonly name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Role states. `secondary` and `primary` are stable; `becoming-primary` / `becoming-secondary` are
 * held while duties start or stop (calls arriving meanwhile queue behind the running transition).
 */
export type Role = 'secondary' | 'becoming-primary' | 'primary' | 'becoming-secondary';

/** A duty failed to start (all started ones were stopped again) or to stop. */
export class PrimaryRoleError extends PvcError {
  constructor(code: 'DUTY_START_FAILED' | 'DUTY_STOP_FAILED', message: string, cause?: unknown) {
    super(code, message, { cause, retryable: code === 'DUTY_START_FAILED' });
  }
}

/** Dependencies of {@link PrimaryRole}. */
export interface PrimaryRoleDeps {
  /** Service name for messages (`netd`, `cephd`). */
  service: string;
  logger: Logger;
  /** Started in order, stopped in reverse order. */
  duties: readonly PrimaryDuty[];
}

/**
 * The role state machine: `secondary` → `primary` → `secondary`. Idempotent (asking for the role in
 * force does nothing and logs nothing); each real transition is logged once with its reason.
 * Transitions are serialised: a call waits for the one before it.
 *
 * Failure rules: if a duty fails to start, the duties already started are stopped again (reverse
 * order), the role stays `secondary` and the call rejects naming the duty. Stopping is best effort:
 * every duty is asked to stop, the role becomes `secondary` regardless (we never claim primary
 * duties we are tearing down), and the call rejects naming each duty that failed to stop.
 */
export class PrimaryRole {
  private role: Role = 'secondary';
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: PrimaryRoleDeps) {}

  /** The role in force now (transitional states included). */
  get current(): Role {
    return this.role;
  }

  /** Whether the primary-only duties are running. */
  get isPrimary(): boolean {
    return this.role === 'primary';
  }

  /** Names of the duties this role switches, in start order. */
  get dutyNames(): string[] {
    return this.deps.duties.map((d) => d.name);
  }

  /** Switches to primary (`true`) or secondary (`false`); resolves with whether we are primary. */
  set(primary: boolean, reason: string): Promise<boolean> {
    const next = this.queue.then(() => (primary ? this.becomePrimary(reason) : this.becomeSecondary(reason)));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async becomePrimary(reason: string): Promise<boolean> {
    if (this.role === 'primary') return true;
    this.transition('becoming-primary', reason);
    const started: PrimaryDuty[] = [];
    for (const duty of this.deps.duties) {
      try {
        await duty.start();
        started.push(duty);
      } catch (err) {
        this.deps.logger.error({ duty: duty.name, err: describeError(err) }, 'primary duty failed to start; undoing');
        await this.stopAll(started.reverse());
        this.transition('secondary', `duty ${duty.name} failed to start`);
        throw new PrimaryRoleError('DUTY_START_FAILED', `${this.deps.service}: primary duty ${duty.name} failed to start: ${describeError(err)}`, err);
      }
    }
    this.transition('primary', reason);
    return true;
  }

  private async becomeSecondary(reason: string): Promise<boolean> {
    if (this.role === 'secondary') return false;
    this.transition('becoming-secondary', reason);
    const failed = await this.stopAll([...this.deps.duties].reverse());
    this.transition('secondary', reason);
    if (failed.length > 0) {
      throw new PrimaryRoleError('DUTY_STOP_FAILED', `${this.deps.service}: primary duties failed to stop: ${failed.join('; ')}`);
    }
    return false;
  }

  /** Stops each duty, going on after failures; returns "<duty>: <error>" per failure. */
  private async stopAll(duties: readonly PrimaryDuty[]): Promise<string[]> {
    const failed: string[] = [];
    for (const duty of duties) {
      try {
        await duty.stop();
      } catch (err) {
        this.deps.logger.error({ duty: duty.name, err: describeError(err) }, 'primary duty failed to stop');
        failed.push(`${duty.name}: ${describeError(err)}`);
      }
    }
    return failed;
  }

  /** Stable states are logged once at info (with the reason); the transitional ones at debug. */
  private transition(to: Role, reason: string): void {
    const from = this.role;
    this.role = to;
    const fields = { from, to, reason, duties: this.dutyNames };
    if (to === 'primary' || to === 'secondary') this.deps.logger.info(fields, `primary role: ${to}`);
    else this.deps.logger.debug(fields, `primary role: ${to}`);
  }
}
