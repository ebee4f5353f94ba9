/**
 * The vmd reconciler's vocabulary: what ZK wants for a VM (desired), what libvirt runs here
 * (observed), the node's own guard facts, and the actions a pass may take.
 */

import type { DaemonState, NodeDomainState, VmState } from '@pvc/zk';

/** The VM state vocabulary is schema v15's, shared by every service (`@pvc/zk` vocab). */
export { VM_STATES, type VmState } from '@pvc/zk';

/** libvirt's virDomainState numbers (0–7) as names. */
export const LIBVIRT_STATE_NAMES = ['nostate', 'running', 'blocked', 'paused', 'shutdown', 'shutoff', 'crashed', 'pmsuspended'] as const;
/** A libvirt domain state. */
export type LibvirtState = (typeof LIBVIRT_STATE_NAMES)[number];

/** What ZK says about one VM (only the keys vmd needs). `undefined` = not read yet. */
export interface DesiredVm {
  readonly uuid: string;
  readonly name: string | undefined;
  /** The `state` key; undefined while absent, empty, or not a known state (see `badState`). */
  readonly state: VmState | undefined;
  /** The text of a `state` value that is no known state (bad input: logged, never acted on). */
  readonly badState?: string | undefined;
  readonly node: string | undefined;
  /** XML memory, MiB, when the stored XML could be read and parsed (for memprov). */
  readonly memoryMiB: number | undefined;
}

/** One libvirt domain on this node, as libvirt reports it. */
export interface ObservedDomain {
  readonly uuid: string;
  readonly name: string;
  /** Active in libvirt (running, paused, blocked…): it occupies this host. */
  readonly active: boolean;
  /** libvirt's state (an active domain may be running, paused, blocked, shutting down or pmsuspended). */
  readonly state: LibvirtState;
  readonly maxMemKiB: number;
  readonly memKiB: number;
  readonly vcpus: number;
  readonly cpuTimeNs: number;
}

/** Facts about this node that gate what a pass may do. */
export interface GuardFacts {
  /** The ZK session is connected: without it nothing is done (a node cut off leaves its VMs alone). */
  readonly zkConnected: boolean;
  /** This node's `domainstate` (undefined = unknown / node not registered / bad value). */
  readonly domainState: NodeDomainState | undefined;
  /** This node's `daemonstate`. */
  readonly daemonState: DaemonState | undefined;
  /** Names under `/nodes` (undefined = not read yet: node-name checks are skipped). */
  readonly knownNodes: ReadonlySet<string> | undefined;
  /** Set after `stopAll` (the node is about to reset itself): no VM is started again. */
  readonly halted?: string | undefined;
}

/** A graceful shutdown in progress on this node. */
export interface ShutdownInProgress {
  readonly sinceMs: number;
  /** What to write once the domain is off: `stop` (shutdown) or `start` (restart). */
  readonly then: 'stop' | 'start';
}

/** Everything {@link plan} looks at. */
export interface PlanInput {
  readonly node: string;
  readonly desired: ReadonlyMap<string, DesiredVm>;
  readonly observed: ReadonlyMap<string, ObservedDomain>;
  readonly guard: GuardFacts;
  readonly shutdowns: ReadonlyMap<string, ShutdownInProgress>;
  readonly nowMs: number;
  /** `vm_shutdown_timeout`, ms. */
  readonly shutdownTimeoutMs: number;
  /** VMs with a background job (a start, a send or a receive) in progress here: left alone by the plan. */
  readonly busy?: ReadonlySet<string>;
}

/** Why a VM got a `log` action (bad input, guards, not implemented). */
export type LogReason =
  | 'unknown-state'
  | 'unknown-node'
  | 'incomplete'
  | 'start-blocked'
  | 'unmigrate-state';

/** One step of a pass, for one VM. `expect` = the ZK state/node the action was planned for. */
export type Action =
  | { kind: 'start'; uuid: string; name: string; expect: Expect }
  | { kind: 'destroy'; uuid: string; name: string; writeState: 'stop' | undefined; expect: Expect; why: string }
  | { kind: 'shutdown'; uuid: string; name: string; then: 'stop' | 'start'; expect: Expect }
  | { kind: 'set-state'; uuid: string; name: string; state: 'start' | 'stop'; expect: Expect; why: string }
  | { kind: 'forget-shutdown'; uuid: string }
  | { kind: 'migrate-send'; uuid: string; name: string; target: string; expect: Expect }
  | { kind: 'migrate-receive'; uuid: string; name: string; expect: Expect }
  | { kind: 'log'; uuid: string; name: string; reason: LogReason; detail: string };

/** The ZK values an action was planned against; apply re-reads and skips it when they changed. */
export interface Expect {
  readonly state: VmState;
  readonly node: string;
}
