/**
 * The IPMI fence of a dead node: power off → confirm off → power on → confirm on, over the Ipmi port
 * and a Clock (so the whole timeline runs in virtual time in tests).
 *
 * Success rule (safety invariant): a fence succeeds if and only if the chassis was CONFIRMED OFF by
 * a `power status` answer after our `power off`. That is what makes recovering the node's VMs
 * elsewhere safe: with the chassis off, every process on it, its VMs included, is dead and can no
 * longer write to their disks. Powering the node back on is only a courtesy so it can rejoin later;
 * it is attempted and reported, and its failure after a confirmed off is a warning, not a failed
 * fence (the VMs are dead either way).
 *
 * The original (inventory §3.3) judged on the final status after power-on and compared the
 * intermediate status with a lower-case "Chassis power is off", so every normal reboot counted as a
 * failed fence [bug?]. We do what it plainly intended. It also had no timeouts; here every call is
 * bounded and a silent BMC fails the fence within 2 × the call timeout.
 */
import { AbortedError, describeError } from '@pvc/runtime';
import type { Clock, Logger } from '@pvc/runtime';
import { bmcName, DEFAULT_IPMI_TIMEOUT_MS, IpmiError } from './ipmi.js';
import type { Ipmi, IpmiTarget, PowerState } from './ipmi.js';

/** Dependencies of {@link fenceIpmi}. */
export interface FenceIpmiDeps {
  ipmi: Ipmi;
  clock: Clock;
  logger?: Logger;
}

/** Options of {@link fenceIpmi}; every value has a default. */
export interface FenceIpmiOptions {
  /** Bound of one IPMI call, ms. Default 5000. */
  timeoutMs?: number;
  /** How long to poll `power status` for "off" after the power off, ms. Default 10 000. */
  confirmOffMs?: number;
  /** How long to poll `power status` for "on" after the power on, ms. Default 10 000. */
  confirmOnMs?: number;
  /** Pause between status polls, ms. Default 1000. */
  pollIntervalMs?: number;
  /** Aborting rejects the fence with AbortedError (no result: the fence did not finish). */
  signal?: AbortSignal;
  /**
   * Called once the node is confirmed off, before it is powered back on: the fence has succeeded
   * at that point (its VMs are dead), so a caller may start recovery while the power-on runs.
   */
  onConfirmedOff?: () => void;
}

/** The four steps, in order. */
export type FenceStepName = 'power-off' | 'confirm-off' | 'power-on' | 'confirm-on';

/** What one step did and how long it took (clock ms). */
export interface FenceStep {
  step: FenceStepName;
  ok: boolean;
  startedAt: number;
  durationMs: number;
  /** IPMI calls made by this step. */
  attempts: number;
  /** The last status seen (confirm steps). */
  lastStatus?: PowerState;
  /** Error code of the last failed call, if any. */
  errorCode?: string;
  /** One line, password-free. */
  detail: string;
}

/** The outcome of one fence. */
export interface FenceResult {
  outcome: 'success' | 'failed';
  /** Why, in one line (password-free). */
  reason: string;
  /** The BMC, host:port. */
  bmc: string;
  /** Whether the node was confirmed back on (false also when power-on was not attempted). */
  poweredBackOn: boolean;
  steps: FenceStep[];
  /** Problems that did not change the outcome (e.g. power-on failed after a confirmed off). */
  warnings: string[];
  startedAt: number;
  durationMs: number;
}

interface Settings {
  timeoutMs: number;
  confirmOffMs: number;
  confirmOnMs: number;
  pollIntervalMs: number;
  signal: AbortSignal | undefined;
}

interface Phase {
  command: FenceStep;
  confirm?: FenceStep;
  confirmed: boolean;
}

function settings(o: FenceIpmiOptions): Settings {
  return Object.freeze({
    timeoutMs: o.timeoutMs ?? DEFAULT_IPMI_TIMEOUT_MS,
    confirmOffMs: o.confirmOffMs ?? 10_000,
    confirmOnMs: o.confirmOnMs ?? 10_000,
    pollIntervalMs: o.pollIntervalMs ?? 1_000,
    signal: o.signal,
  });
}

function rethrowAbort(err: unknown, signal: AbortSignal | undefined): void {
  if (err instanceof AbortedError || signal?.aborted) throw err;
}

function codeOf(err: unknown): string | undefined {
  return err instanceof IpmiError ? err.code : undefined;
}

/**
 * Runs `power off|on`, then polls status until it shows `want`. If the command got no answer, the
 * BMC may still have acted on it, so status is asked once (not polled: a silent BMC must fail fast).
 * A non-retryable error (bad credentials) skips the confirmation.
 */
async function commandThenConfirm(deps: FenceIpmiDeps, target: IpmiTarget, want: PowerState, s: Settings): Promise<Phase> {
  const name: FenceStepName = want === 'off' ? 'power-off' : 'power-on';
  const startedAt = deps.clock.now();
  let command: FenceStep;
  try {
    if (want === 'off') await deps.ipmi.powerOff(target, { timeoutMs: s.timeoutMs, signal: s.signal });
    else await deps.ipmi.powerOn(target, { timeoutMs: s.timeoutMs, signal: s.signal });
    command = { step: name, ok: true, startedAt, durationMs: deps.clock.now() - startedAt, attempts: 1, detail: 'accepted' };
  } catch (err) {
    rethrowAbort(err, s.signal);
    command = {
      step: name, ok: false, startedAt, durationMs: deps.clock.now() - startedAt, attempts: 1,
      errorCode: codeOf(err), detail: describeError(err),
    };
    if (err instanceof IpmiError ? !err.retryable : true) return { command, confirmed: false };
  }
  const budget = want === 'off' ? s.confirmOffMs : s.confirmOnMs;
  const silent = command.errorCode === 'IPMI_UNREACHABLE';
  const confirm = await confirmStatus(deps, target, want, s, silent ? { budgetMs: s.timeoutMs, maxAttempts: 1 } : { budgetMs: budget, maxAttempts: Infinity });
  return { command, confirm, confirmed: confirm.ok };
}

/** Polls `power status` until it answers `want`, within a budget; stops early on a non-retryable error. */
async function confirmStatus(
  deps: FenceIpmiDeps,
  target: IpmiTarget,
  want: PowerState,
  s: Settings,
  limit: { budgetMs: number; maxAttempts: number },
): Promise<FenceStep> {
  const { clock } = deps;
  const startedAt = clock.now();
  const deadline = startedAt + limit.budgetMs;
  const step: FenceStep = { step: want === 'off' ? 'confirm-off' : 'confirm-on', ok: false, startedAt, durationMs: 0, attempts: 0, detail: '' };
  for (;;) {
    step.attempts++;
    try {
      step.lastStatus = await deps.ipmi.powerStatus(target, { timeoutMs: Math.max(1, Math.min(s.timeoutMs, deadline - clock.now())), signal: s.signal });
      step.errorCode = undefined;
      if (step.lastStatus === want) step.ok = true;
    } catch (err) {
      rethrowAbort(err, s.signal);
      step.errorCode = codeOf(err);
      step.detail = describeError(err);
      if (!(err instanceof IpmiError && err.retryable)) break;
    }
    const left = deadline - clock.now();
    if (step.ok || step.attempts >= limit.maxAttempts || left <= 0) break;
    await clock.sleep(Math.min(s.pollIntervalMs, left), s.signal);
    if (deadline - clock.now() <= 0) break;
  }
  step.durationMs = clock.now() - startedAt;
  step.detail = step.ok
    ? `status ${want} after ${step.attempts} call(s)`
    : `not ${want} after ${step.attempts} call(s) in ${step.durationMs} ms` +
      (step.errorCode !== undefined ? `: ${step.detail}` : `; last status ${step.lastStatus ?? 'unknown'}`);
  return step;
}

/** Why a phase failed, in one line. */
function phaseFailure(p: Phase, verb: string): string {
  if (p.confirm === undefined) return `${verb} failed: ${p.command.detail}`;
  if (p.command.ok) return `${verb} accepted but ${p.confirm.detail}`;
  return `${verb} failed (${p.command.detail}) and ${p.confirm.detail}`;
}

function logStep(deps: FenceIpmiDeps, bmc: string, step: FenceStep): void {
  const fields = { component: 'fence-ipmi', bmc, step: step.step, ok: step.ok, durationMs: step.durationMs, attempts: step.attempts, detail: step.detail };
  if (step.ok) deps.logger?.info(fields, 'fence step');
  else deps.logger?.warn(fields, 'fence step failed');
}

/**
 * Fences one node through its BMC and returns what happened. Never throws for an IPMI failure (that
 * is a `failed` outcome with a reason); rejects only with AbortedError when `signal` aborts.
 */
export async function fenceIpmi(deps: FenceIpmiDeps, target: IpmiTarget, options: FenceIpmiOptions = {}): Promise<FenceResult> {
  const s = settings(options);
  const bmc = bmcName(target);
  const startedAt = deps.clock.now();
  const steps: FenceStep[] = [];
  const warnings: string[] = [];
  const push = (...xs: (FenceStep | undefined)[]): void => {
    for (const x of xs) {
      if (x === undefined) continue;
      steps.push(x);
      logStep(deps, bmc, x);
    }
  };
  const finish = (outcome: FenceResult['outcome'], reason: string, poweredBackOn: boolean): FenceResult => {
    const r = { outcome, reason, bmc, poweredBackOn, steps, warnings, startedAt, durationMs: deps.clock.now() - startedAt };
    const fields = { component: 'fence-ipmi', bmc, outcome, reason, durationMs: r.durationMs, warnings };
    if (outcome === 'success') deps.logger?.info(fields, 'fence finished');
    else deps.logger?.error(fields, 'fence failed');
    return r;
  };

  const off = await commandThenConfirm(deps, target, 'off', s);
  push(off.command, off.confirm);
  if (!off.confirmed) return finish('failed', `node not confirmed off: ${phaseFailure(off, 'power off')}`, false);
  options.onConfirmedOff?.();
  const on = await commandThenConfirm(deps, target, 'on', s);
  push(on.command, on.confirm);
  if (!on.confirmed) {
    warnings.push(`node did not come back on: ${phaseFailure(on, 'power on')}`);
    return finish('success', 'node confirmed off (power-on after the fence failed: see warnings)', false);
  }
  return finish('success', 'node confirmed off, then powered back on', true);
}
