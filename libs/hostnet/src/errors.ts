import { PvcError } from '@pvc/runtime';

/**
 * What is wrong with the host's interfaces: a configured device that does not exist
 * (`HOSTNET_NO_DEVICE`), an MTU the device refuses (`HOSTNET_MTU_REFUSED`), a node address another
 * host already answers for (`HOSTNET_ADDRESS_IN_USE`), an upstream gateway outside every network
 * this node has an address on (`HOSTNET_GATEWAY_UNREACHABLE`), something in the way that is not
 * ours to move (`HOSTNET_CONFLICT`: a device in another bridge, a non-bridge link named like our
 * bridge), or a command or read that failed otherwise (`HOSTNET_FAILED`).
 */
export type HostNetworkErrorCode =
  | 'HOSTNET_NO_DEVICE'
  | 'HOSTNET_MTU_REFUSED'
  | 'HOSTNET_ADDRESS_IN_USE'
  | 'HOSTNET_GATEWAY_UNREACHABLE'
  | 'HOSTNET_CONFLICT'
  | 'HOSTNET_FAILED';

/** One problem, at the config key it concerns (`pvc.system.configuration.networking.cluster.device`). */
export interface HostNetworkProblem {
  readonly code: HostNetworkErrorCode;
  readonly key: string;
  readonly message: string;
}

/** `<key>: <message>`, as config problems are written. */
export function formatHostNetworkProblem(p: HostNetworkProblem): string {
  return `${p.key}: ${p.message}`;
}

/**
 * The host interfaces cannot be set up as configured. Terminal (not retryable): bring-up stops
 * before the node registers. `problems` holds every problem found before anything was changed
 * (or the one change that failed); the message joins them with `; `.
 */
export class HostNetworkError extends PvcError {
  readonly problems: readonly HostNetworkProblem[];

  constructor(problems: readonly HostNetworkProblem[], cause?: unknown) {
    const first = problems[0];
    super(first?.code ?? 'HOSTNET_FAILED', problems.map(formatHostNetworkProblem).join('; '), { cause, retryable: false });
    this.problems = problems;
  }
}
