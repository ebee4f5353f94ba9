/**
 * One pass of the client network devices: observe, plan ({@link planClientNetworks}), apply. A
 * failed change stops the rest of its own network's changes in this pass (they build on it) and
 * is recorded; the other networks go on. The next pass observes again and plans what is left, so
 * a retry repeats nothing that was done.
 *
 * @module
 */
import { ClientNetError, describeAction, type ClientDevicePort } from './device-port.js';
import type { ClientNetwork, DeviceAction, NetworkProblem, NodeFacts } from './model.js';
import { bridgesUpAfter } from './networks-up.js';
import { planClientNetworks } from './plan.js';

/** A change that failed, with the error (whose message names the network and device). */
export interface FailedChange {
  readonly vni: number;
  readonly action: DeviceAction;
  readonly error: ClientNetError;
}

/** What a pass did. */
export interface ConvergeResult {
  readonly applied: readonly DeviceAction[];
  readonly failed: readonly FailedChange[];
  /** Networks that were not planned (bad input, missing devices, a device netd did not make). */
  readonly problems: readonly NetworkProblem[];
  /** Changes not tried because an earlier change of the same network failed. */
  readonly skipped: readonly DeviceAction[];
  /** VNIs whose `vmbr<vni>` is up after the pass, any maker ({@link bridgesUpAfter}); ascending. */
  readonly bridgesUp: readonly number[];
}

/** Options of {@link convergeClientNetworks}. */
export interface ConvergeOptions {
  /** Told of each change before it is applied (logs). */
  onAction?: (a: DeviceAction, line: string) => void;
  /** Stops between changes when aborted (what was applied stays). */
  signal?: AbortSignal;
}

const asClientNetError = (a: DeviceAction, err: unknown): ClientNetError =>
  err instanceof ClientNetError
    ? err
    : new ClientNetError('REFUSED', `${describeAction(a)}: ${err instanceof Error ? err.message : String(err)}`, { vni: a.vni, device: a.device, cause: err });

/**
 * Converges this host's client network devices on `networks`. Rejects only when the host cannot
 * be observed (nothing was changed then); every change's failure is in the result.
 */
export async function convergeClientNetworks(port: ClientDevicePort, networks: readonly ClientNetwork[], facts: NodeFacts, o: ConvergeOptions = {}): Promise<ConvergeResult> {
  const observed = await port.observe();
  const plan = planClientNetworks({ networks, facts, observed });
  const applied: DeviceAction[] = [];
  const failed: FailedChange[] = [];
  const skipped: DeviceAction[] = [];
  const broken = new Set<number>();
  for (const a of plan.actions) {
    if (broken.has(a.vni) || o.signal?.aborted) {
      skipped.push(a);
      continue;
    }
    o.onAction?.(a, describeAction(a));
    try {
      await port.apply(a);
      applied.push(a);
    } catch (err) {
      broken.add(a.vni);
      failed.push({ vni: a.vni, action: a, error: asClientNetError(a, err) });
    }
  }
  return { applied, failed, problems: plan.problems, skipped, bridgesUp: bridgesUpAfter(observed.links, applied) };
}
