/**
 * Target-node selection for VM migration, flush and fence recovery. Every figure here is already
 * parsed from ZK by the caller (`/nodes/<name>/...` and `/domains/<uuid>/...`); this package does
 * no I/O.
 */

/** A placement algorithm, as stored in `/config/migration_target_selector` and `node_selector`. */
export type Selector = 'mem' | 'memprov' | 'vcpus' | 'load' | 'vms';

/** The figures of one node that selection reads (ZK `/nodes/<name>` keys, MiB as numbers). */
export interface NodeFacts {
  /** Short hostname (the `/nodes` child name). */
  readonly name: string;
  /** `daemonstate`: only `run` is eligible. Kept as text because ZK may hold anything. */
  readonly daemonState: string;
  /** `domainstate`: only `ready` is eligible. */
  readonly domainState: string;
  /** `memtotal`. Informational: the original compares against used + free, not total. */
  readonly memTotalMiB: number;
  /** `memused`. */
  readonly memUsedMiB: number;
  /** `memfree` (psutil "available"). */
  readonly memFreeMiB: number;
  /** `memalloc`: live memory of the running VMs. */
  readonly memAllocMiB: number;
  /** `memprov`: memalloc plus the memory of stopped VMs assigned to the node. */
  readonly memProvMiB: number;
  /** `vcpualloc`: vCPUs of the running VMs. */
  readonly vcpuAlloc: number;
  /** `cpuload`: 1-minute load average. */
  readonly cpuLoad: number;
  /** `domainscount`: number of running VMs. */
  readonly domainsCount: number;
  /** CPU count from `staticdata` (first field). When known, a VM with more vCPUs does not fit. */
  readonly staticCpus?: number;
  /**
   * `networks_up` (ours, written by netd): the VNIs whose `vmbr<vni>` bridge is up on the node.
   * Undefined = unknown (an original node, or one without networking): networks are not checked.
   */
  readonly networks?: ReadonlySet<number>;
}

/** The VM being placed. */
export interface VmRequest {
  /** VM name (or UUID); used only in messages and plan results. */
  readonly name: string;
  /** Memory the VM needs on the target, MiB. Must be a positive finite number. */
  readonly memoryMiB: number;
  /** vCPU count. Must be a finite number ≥ 0. */
  readonly vcpus: number;
  /** The node the VM counts as being on; never chosen as its target. */
  readonly currentNode: string;
  /** Raw `node_selector`; empty, `none` or `None` (or absent) means the cluster selector. */
  readonly selector?: string;
  /** Parsed `node_limit` (see `parseNodeLimit`); empty or absent means every node. */
  readonly nodeLimit?: readonly string[];
  /** VNIs of the `vmbr<vni>` bridges the VM's interfaces name; a target must have each up. */
  readonly networks?: readonly number[];
}

/** Everything `selectTarget` needs. */
export interface PlacementInput {
  readonly vm: VmRequest;
  /** Every node of the cluster, in any order (the result does not depend on it). */
  readonly nodes: readonly NodeFacts[];
  /** Raw `/config/migration_target_selector`. */
  readonly clusterSelector: string;
  /** Further nodes never to choose (e.g. the node being fenced). */
  readonly exclude?: readonly string[];
}

/** Why one node was not chosen. */
export interface Rejection {
  readonly node: string;
  /** Human-readable, without the node name, e.g. `512 MiB free < 1024 MiB needed`. */
  readonly why: string;
}

/** Failure codes of `selectTarget`. */
export type PlacementFailureCode = 'NO_ELIGIBLE_NODE' | 'UNKNOWN_SELECTOR' | 'INVALID_VM';

/** Where the effective selector came from. */
export type SelectorSource = 'vm' | 'cluster';

/** A target was found. */
export interface PlacementSuccess {
  readonly ok: true;
  readonly node: string;
  readonly selector: Selector;
  readonly selectorSource: SelectorSource;
  /** One line, e.g. `hv2 has the most free memory (8192 MiB) of 2 eligible nodes`. */
  readonly reason: string;
  /** Every node that was not eligible, sorted by name. */
  readonly rejected: readonly Rejection[];
  /** `nodeLimit` entries naming no known node, sorted; reported, never fatal. */
  readonly unknownLimitNodes: readonly string[];
}

/** No target. The caller decides what to do (e.g. shut the VM down with autostart). */
export interface PlacementFailure {
  readonly ok: false;
  readonly code: PlacementFailureCode;
  /**
   * For `NO_ELIGIBLE_NODE`: every rejection as `node: why`, joined by `; ` in name order
   * (`no nodes` when the node list is empty). Otherwise the selector or VM problem.
   */
  readonly reason: string;
  readonly rejected: readonly Rejection[];
  readonly unknownLimitNodes: readonly string[];
}

/** Result of `selectTarget`. */
export type PlacementResult = PlacementSuccess | PlacementFailure;
