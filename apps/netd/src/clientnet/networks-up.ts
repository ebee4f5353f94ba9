/**
 * `/nodes/<node>/networks_up` (ours, not in the original's schema v15): the VNIs whose bridge
 * `vmbr<vni>` exists and is up on this node, whoever made it (netd, or an administrator). Placement
 * (vmd's flush, keepaliled's recovery, the CLI) does not choose a node known to lack a VM's network,
 * and `pvc network add|remove --wait` waits on it. Absent means unknown: a node of the original, or
 * one without networking — so netd deletes a stale value when it starts with networking off.
 *
 * @module
 */
import { describeError, retryUntilDone, type Clock, type Logger } from '@pvc/runtime';
import { codec, nodeKeys, pair, readKeyIfExists, type ZkClient } from '@pvc/zk';
import { bridgeOf, type DeviceAction, type ObservedLink } from './model.js';

const BRIDGE = /^vmbr(0|[1-9][0-9]*)$/;

/**
 * The VNIs of the `vmbr<vni>` bridges up after a pass, from the links observed before it and the
 * changes applied in it (no second observation): a created bridge is down until its `set-up`, a
 * deleted one is gone. Ascending.
 */
export function bridgesUpAfter(observed: readonly ObservedLink[], applied: readonly DeviceAction[]): number[] {
  const up = new Map<string, boolean>();
  for (const l of observed) if (l.kind === 'bridge' && BRIDGE.test(l.name)) up.set(l.name, l.up);
  for (const a of applied) {
    if (!BRIDGE.test(a.device) || a.device !== bridgeOf(a.vni)) continue;
    if (a.kind === 'create-bridge') up.set(a.device, false);
    else if (a.kind === 'set-up' && up.has(a.device)) up.set(a.device, true);
    else if (a.kind === 'delete') up.delete(a.device);
  }
  return [...up].filter(([, isUp]) => isUp).map(([name]) => Number(BRIDGE.exec(name)?.[1])).sort((a, b) => a - b);
}

/** Dependencies of {@link NetworksUpPublisher}. */
export interface NetworksUpDeps {
  zk: ZkClient;
  /** This node's name (`pvc.node`). */
  node: string;
  logger: Logger;
}

/**
 * Keeps this node's `networks_up` on what the follower saw. Each call reads the key and writes only
 * when the stored list differs (or is absent or unreadable); a failure is logged once (again only
 * after a success) and the next call tries again. Never throws.
 */
export class NetworksUpPublisher {
  private failing: string | undefined;

  constructor(private readonly deps: NetworksUpDeps) {}

  /** Makes the stored list `vnis`; resolves true when it is stored (written or already there). */
  async publish(vnis: readonly number[], signal?: AbortSignal): Promise<boolean> {
    const key = nodeKeys(this.deps.node).networksUp;
    try {
      const stored = await readKeyIfExists(this.deps.zk, key, { logger: this.deps.logger, ...(signal ? { signal } : {}) });
      const want = codec.vniList.encode([...vnis]);
      if (stored !== undefined && codec.vniList.encode(stored) === want) return this.ok();
      await this.deps.zk.write([pair(key, [...vnis])], signal ? { signal } : {});
      this.deps.logger.info({ key: key.path, networks: want }, 'client network bridges up on this node written to Zookeeper');
      return this.ok();
    } catch (err) {
      return this.failed(err, 'cannot write the client network bridges up on this node to Zookeeper; retried at the next pass', signal);
    }
  }

  /** Deletes the key (networking is off here: a stale list must not mislead placement); true when it is gone. */
  async clear(signal?: AbortSignal): Promise<boolean> {
    const key = nodeKeys(this.deps.node).networksUp;
    try {
      if ((await this.deps.zk.exists(key.path, signal ? { signal } : {})) === undefined) return this.ok();
      await this.deps.zk.delete(key.path, { missingOk: true, ...(signal ? { signal } : {}) });
      this.deps.logger.info({ key: key.path }, 'networking is off on this node: removed its stale list of client network bridges from Zookeeper');
      return this.ok();
    } catch (err) {
      return this.failed(err, 'cannot remove the stale list of client network bridges of this node from Zookeeper; retried', signal);
    }
  }

  /**
   * {@link clear} until it succeeds, every `everyMs`, or until `signal` aborts. Never rejects.
   */
  clearUntilDone(clock: Clock, everyMs: number, signal: AbortSignal): Promise<void> {
    return retryUntilDone(clock, everyMs, () => this.clear(signal), signal);
  }

  private ok(): true {
    this.failing = undefined;
    return true;
  }

  private failed(err: unknown, msg: string, signal: AbortSignal | undefined): false {
    if (signal?.aborted) return false;
    const error = describeError(err);
    if (this.failing !== error) this.deps.logger.warn({ key: nodeKeys(this.deps.node).networksUp.path, err: error }, msg);
    this.failing = error;
    return false;
  }
}
