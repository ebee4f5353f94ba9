/**
 * What a storage request becomes before anything runs: the Ceph commands in order, each with the
 * command that undoes it (or none when it cannot be undone), the reads whose output the Zookeeper
 * write needs, and the Zookeeper change (one transaction). Built by the pure planners
 * (plan-pool.ts, plan-volume.ts) from the request and a {@link StorageView}; carried out by
 * execute.ts.
 *
 * @module
 */
import type { CephTool } from '../host/ceph-cli.js';

/** One Ceph command. `long`: it may copy or delete a whole image (a longer deadline). */
export interface CephCommand {
  readonly tool: CephTool;
  readonly args: readonly string[];
  readonly long?: boolean;
}

/**
 * A change to Zookeeper, applied as one transaction: `deleteTrees` (each with everything under it;
 * an absent one is nothing), then `create` in order (parents first), then `set`.
 */
export interface ZkChange {
  readonly deleteTrees: readonly string[];
  readonly create: readonly (readonly [path: string, value: string])[];
  readonly set: readonly (readonly [path: string, value: string])[];
}

/** One Ceph step of a plan. */
export interface PlanStep {
  /** What it does, for messages: `creating pool "vms"`. */
  readonly what: string;
  readonly run: CephCommand;
  /** Undoes it when a later step or the Zookeeper write fails; absent = cannot be undone. */
  readonly undo?: { readonly what: string; readonly run: CephCommand };
  /**
   * Only for steps that cannot be undone (removals): the Zookeeper change that reflects this step
   * alone, applied when a later step fails (so Zookeeper still says what Ceph has).
   */
  readonly reflect?: ZkChange;
  /** Ceph saying the object does not exist counts as done (removals: already gone). */
  readonly missingOk?: boolean;
}

/** A request made into steps. */
export interface Plan {
  readonly steps: readonly PlanStep[];
  /** JSON reads after the steps (e.g. `rbd info` of the new image); their outputs go to `change`. */
  readonly reads: readonly CephCommand[];
  /** The Zookeeper change once every step and read succeeded. */
  readonly change: (outputs: readonly unknown[]) => ZkChange;
  /** The answer's message on success. */
  readonly done: string;
}

/** A plan, or the reason the request is refused before anything runs. */
export type Planned = { readonly kind: 'plan'; readonly plan: Plan } | { readonly kind: 'refuse'; readonly reason: string };

/** A volume as Zookeeper has it. */
export interface VolumeState {
  /** `rbd info` JSON stored in its `stats` (null: none or not JSON). */
  readonly stats: unknown;
  /** Its snapshots with their stored stats. */
  readonly snapshots: ReadonlyMap<string, unknown>;
  /** `/ceph/snapshots/<pool>/<vol>` exists. */
  readonly snapshotParent: boolean;
}

/** A pool as Zookeeper has it. */
export interface PoolState {
  readonly pgs: number;
  readonly volumes: ReadonlyMap<string, VolumeState>;
}

/** The pool's figures from `ceph df` (the original's `free_bytes` and `used_bytes`). */
export interface PoolDf {
  readonly freeBytes: number;
  readonly usedBytes: number;
}

/** What the planners look at, read when the request is carried out (view.ts). */
export interface StorageView {
  /** The request's pool in Zookeeper; undefined = not there. */
  readonly pool: PoolState | undefined;
  /** `pool.add`: Ceph already has a pool of that name. */
  readonly cephHasPool?: boolean;
  /** `pool.add` with a tier: Ceph's CRUSH rules. */
  readonly crushRules?: readonly string[];
  /** `volume.add|resize|clone`: the pool in `ceph df`. Undefined: not listed there. */
  readonly df?: PoolDf | undefined;
  /** `volume.resize|clone`: the image's size in Ceph now (`rbd info`). */
  readonly imageSize?: number;
}

/** An empty change plus `c`. */
export function change(c: Partial<ZkChange>): ZkChange {
  return { deleteTrees: c.deleteTrees ?? [], create: c.create ?? [], set: c.set ?? [] };
}

/** A refusal. */
export function refuse(reason: string): Planned {
  return { kind: 'refuse', reason };
}
