import { domainKeys, pair, type VmState, type ZkClient } from '@pvc/zk';
import type { CliContext } from '../context.js';
import { refused } from '../errors.js';
import type { VmRef } from '../lookup.js';
import { DEFAULT_WAIT_TIMEOUT_S, waitUntil, type WaitStep } from '../wait.js';
import { describeStatus, LOCK_TIMEOUT_S, readVmStatus, withStateLock, type VmStatus } from './vm-status.js';

/** The state changes of `pvc vm start|stop|shutdown|restart|disable`. */
export type StateAction = 'start' | 'stop' | 'shutdown' | 'restart' | 'disable';

/**
 * What a state change does, decided from the current state (inventory §5.5):
 * - `write`: write `state` once;
 * - `disable`: optionally write `first` (`shutdown`, or `stop` when forced), wait until the VM is
 *   stopped, then write `disable`;
 * - `refuse`: nothing is written; `why` is the one-line reason.
 */
export type StatePlan =
  | { kind: 'write'; state: StateAction }
  | { kind: 'disable'; first: 'shutdown' | 'stop' | null }
  | { kind: 'refuse'; why: string };

/** States in which a VM is running and moving between states; disable waits for none of them. */
const BUSY = new Set(['restart', 'migrate', 'migrate-live']);

/**
 * Plans a state change. start/stop/disable refuse `mirror` unless forced; restart and shutdown
 * need `start`; disable of a running VM shuts it down (or stops it when forced) first; disable
 * refuses while a restart or migration runs. start of a started VM rewrites `start` (as the
 * original does), which makes its node start it if it is not running.
 */
export function planStateChange(name: string, current: string, action: StateAction, force: boolean): StatePlan {
  if (current === 'mirror' && !force && (action === 'start' || action === 'stop' || action === 'disable')) {
    return { kind: 'refuse', why: `cannot ${action} VM "${name}": it is mirror (a mirror destination); add --force to do it anyway` };
  }
  if ((action === 'restart' || action === 'shutdown') && current !== 'start') {
    return { kind: 'refuse', why: `cannot ${action} VM "${name}": it is ${current || '(empty)'}, not start` };
  }
  if (action !== 'disable') return { kind: 'write', state: action };
  if (current === 'start') return { kind: 'disable', first: force ? 'stop' : 'shutdown' };
  if (current === 'shutdown') return { kind: 'disable', first: null };
  if (BUSY.has(current)) {
    return { kind: 'refuse', why: `cannot disable VM "${name}" while it is ${current}: wait until that is done` };
  }
  return { kind: 'write', state: 'disable' };
}

/** Stopped = state `stop` and listed running on no node. */
function stoppedStep(s: VmStatus, allowed: readonly string[]): WaitStep {
  const progress = describeStatus(s);
  if (s.state === 'stop' && s.runningOn.length === 0) return { done: true, progress };
  if (!allowed.includes(s.state)) return { done: false, failed: `its state changed to ${s.state}`, progress };
  return { done: false, progress };
}

/** Running = state `start` and listed running on its own node; `fail` is a failure. */
function runningStep(s: VmStatus, allowed: readonly string[]): WaitStep {
  const progress = describeStatus(s);
  if (s.state === 'fail') return { done: false, failed: s.failedReason || 'state fail (no failedreason)', progress };
  if (s.state === 'start' && s.runningOn.includes(s.node)) return { done: true, progress };
  if (!allowed.includes(s.state)) return { done: false, failed: `its state changed to ${s.state}`, progress };
  return { done: false, progress };
}

/** The `--wait` condition of each action (see `pvc vm <action> -h`). */
export function waitStep(action: StateAction, s: VmStatus): WaitStep {
  switch (action) {
    case 'start':
      return runningStep(s, ['start']);
    case 'restart':
      return runningStep(s, ['restart', 'start']);
    case 'stop':
      return stoppedStep(s, ['stop']);
    case 'shutdown':
      return stoppedStep(s, ['shutdown', 'stop']);
    case 'disable':
      return s.state === 'disable'
        ? { done: true, progress: describeStatus(s) }
        : { done: false, failed: `its state changed to ${s.state}`, progress: describeStatus(s) };
  }
}

async function writeState(zk: ZkClient, ref: VmRef, state: VmState): Promise<void> {
  await zk.write([pair(domainKeys(ref.uuid).state, state)]);
}

/** disable: [shutdown|stop], wait until stopped (lock released meanwhile), then `disable` if still `stop`. */
async function disableAfterStop(ctx: CliContext, zk: ZkClient, ref: VmRef, waitS: number): Promise<void> {
  await waitUntil(ctx, `VM "${ref.name}" stopping before disable`, waitS, async () => stoppedStep(await readVmStatus(zk, ref), ['shutdown', 'stop']));
  await withStateLock(ctx, zk, ref, LOCK_TIMEOUT_S, async () => {
    const now = (await readVmStatus(zk, ref)).state;
    if (now !== 'stop') throw refused(`VM "${ref.name}" stopped but its state then changed to ${now}; not disabled`);
    await writeState(zk, ref, 'disable');
  });
}

/**
 * Changes a VM's state the way the original API does (`state` written under the kazoo Lock on
 * `/domains/<uuid>/state`, held only for the read-check-write) and, with `waitS`, waits until the
 * node daemons have done it (see {@link waitStep}). Throws a one-line CliError when refused
 * (exit 1, nothing written), when the wait sees a failure (exit 1) or times out (exit 4).
 * disable of a running VM always waits for it to stop, for `waitS`, else `stopTimeoutS`, else 300 s.
 * Returns a one-line human result.
 */
export async function changeVmState(
  ctx: CliContext,
  ref: VmRef,
  action: StateAction,
  opts: { force?: boolean; waitS?: number; stopTimeoutS?: number },
): Promise<string> {
  const { zk } = await ctx.cluster();
  const lockS = opts.waitS ?? LOCK_TIMEOUT_S;
  const { plan, was } = await withStateLock(ctx, zk, ref, lockS, async () => {
    const was = (await readVmStatus(zk, ref)).state;
    const plan = planStateChange(ref.name, was, action, opts.force === true);
    if (plan.kind === 'refuse') throw refused(plan.why);
    if (plan.kind === 'write') await writeState(zk, ref, plan.state);
    else if (plan.first !== null) await writeState(zk, ref, plan.first);
    return { plan, was };
  });
  if (plan.kind === 'disable') await disableAfterStop(ctx, zk, ref, opts.waitS ?? opts.stopTimeoutS ?? DEFAULT_WAIT_TIMEOUT_S);
  const set = `Set VM "${ref.name}" to ${action} (was ${was || '(empty)'})`;
  if (opts.waitS === undefined) return `${set}${was === action && action === 'start' ? '; rewritten to make its node start it if it is not running' : ''}`;
  const last = await waitUntil(ctx, `VM "${ref.name}" ${action}`, opts.waitS, async () => waitStep(action, await readVmStatus(zk, ref)));
  return `${set}; done: ${last ?? action}`;
}
