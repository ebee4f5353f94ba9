/**
 * cephd's service object: storage figures for keepalives, RBD lock flushing for VM starts and
 * recovery, and the primary role, whose duties (`duties.ts`) write the Ceph status and stats into
 * Zookeeper. Each node's own OSD objects are kept by `own-osds.ts`, run beside this by compose.ts.
 */
import { describeError, PvcError, type Exec, type Logger, untilAborted } from '@pvc/runtime';
import type { ZkClient } from '@pvc/zk';
import { createCephCli } from './host/ceph-cli.js';
import type { RadosClient } from './host/librados.js';
import { cliLockOps, flushLocks, radosLockOps, type FlushMode, type FlushResult } from './lock-flush.js';
import { countLocalOsds, osdIdsOf } from './osd-count.js';
import type { PrimaryRole } from '@pvc/rpc';

/** FlushLocks on a node whose config has `functions.enable_storage: false`. */
export class StorageDisabledError extends PvcError {
  constructor(node: string) {
    super('STORAGE_DISABLED', `storage is not enabled on ${node}`, { retryable: false });
  }
}

/** What keepaliled gets for the storage part of a keepalive. */
export interface StorageStats {
  enabled: boolean;
  osdCount: number;
}

/** Dependencies of {@link Cephd}, built by the composition root. */
export interface CephdDeps {
  node: string;
  /** `functions.enable_storage`. */
  storageEnabled: boolean;
  /**
   * This node's storage address (`system.configuration.networking.storage`, by-id or static, as
   * resolved by the config): the address a lock held by this node shows. Undefined = none.
   */
  storageAddress: string | undefined;
  /** Present when storage is enabled (cephd does not talk to Zookeeper otherwise). */
  zk: ZkClient | undefined;
  exec: Exec;
  /**
   * cephd's long-lived librados/librbd client for lock flushes and `osd down`; undefined = the
   * `rbd` and `ceph` tools through `exec` (librados not loadable, or `PVC_CEPH_CLIENT=cli`).
   */
  rados: RadosClient | undefined;
  logger: Logger;
  role: PrimaryRole;
  /** Deadline of each `rbd`/`ceph` command (the librados client has its own op timeouts). */
  rbdTimeoutMs: number;
  /** Deadline of each Zookeeper read behind GetStorageStats (the caller waits about 1 s). */
  zkTimeoutMs: number;
}

/** cephd's work; the gRPC handlers call these methods. */
export class Cephd {
  private osdCount = 0;
  private lastProblem = '';
  /** The shutdown signal once {@link run} started; aborts rbd commands in flight. */
  private stopping: AbortSignal | undefined;

  constructor(private readonly deps: CephdDeps) {}

  get role(): PrimaryRole {
    return this.deps.role;
  }

  /**
   * Storage enabled and the OSDs on this node. The count is read fresh from Zookeeper; while it
   * is unreachable (or a read fails) the last known count is returned and the problem logged once.
   */
  async getStorageStats(): Promise<StorageStats> {
    const { zk, storageEnabled } = this.deps;
    if (!storageEnabled || !zk) return { enabled: false, osdCount: 0 };
    if (zk.state === 'connected') {
      try {
        this.osdCount = await countLocalOsds(zk, this.deps.node, this.deps.zkTimeoutMs, this.deps.logger);
        this.problem('');
      } catch (err) {
        this.problem(`cannot count OSDs in Zookeeper: ${describeError(err)}`);
      }
    } else {
      this.problem(`Zookeeper is ${zk.state}; reporting the last known OSD count`);
    }
    return { enabled: true, osdCount: this.osdCount };
  }

  /**
   * Frees the locks on each image: in `own` mode (before a start here) only those held from this
   * node's storage address, refusing images held from elsewhere; in `force` mode (fence recovery)
   * all, and meanwhile `deadNode`'s OSDs ({@link markOsdsDown}). Per-image failures are in
   * `failed`, foreign holders in `held`. Refused when storage is off.
   */
  async flushLocks(images: readonly string[], mode: FlushMode, deadNode = ''): Promise<FlushResult> {
    if (!this.deps.storageEnabled) throw new StorageDisabledError(this.deps.node);
    const { exec, rados, logger, rbdTimeoutMs, storageAddress } = this.deps;
    const ops = rados ? radosLockOps(rados) : cliLockOps({ exec, commandTimeoutMs: rbdTimeoutMs, signal: this.stopping });
    const ids = mode === 'force' && deadNode !== '' ? await this.osdsOf(deadNode) : [];
    const flush = (): Promise<FlushResult> => flushLocks({ ops, logger }, images, { mode, ownAddress: storageAddress });
    const marking = ids.length > 0 ? this.markOsdsDown(deadNode, ids) : undefined;
    let result: FlushResult;
    if (rados) {
      // The dead node's OSDs down first, then the latest map, so that no call of the flush goes to
      // a dead OSD and waits there for the objecter's timeout.
      await marking;
      await rados.latestOsdMap().catch((err: unknown) => logger.warn({ err: describeError(err) }, 'could not fetch the latest OSD map before the lock flush'));
      result = await flush();
    } else {
      // Each rbd process fetches the maps itself; `osd down` runs beside the flush.
      [result] = await Promise.all([flush(), marking]);
    }
    logger.info({ mode, flushed: result.flushed, failed: result.failed, held: result.held }, 'RBD lock flush');
    return result;
  }

  /**
   * Marks the OSDs of `node` (fenced: confirmed off) down in Ceph, from its `/ceph/osds/<id>/node`
   * keys. Ceph would mark them down itself only after its heartbeat grace and a report; until then a
   * command on an object whose primary OSD was there waits (about 1.3 s of a fence recovery here).
   * A node that is in fact up re-asserts its OSDs, so this is safe. Never throws: a failure is
   * logged and the flush goes on (Ceph then marks them down itself).
   */
  private async markOsdsDown(node: string, ids: readonly string[]): Promise<void> {
    const { exec, rados, logger, rbdTimeoutMs } = this.deps;
    const started = Date.now();
    try {
      if (rados) await rados.monCommand({ prefix: 'osd down', ids: [...ids] });
      else await createCephCli(exec).text('ceph', ['osd', 'down', ...ids.map((id) => `osd.${id}`)], { timeoutMs: rbdTimeoutMs, signal: this.stopping });
      logger.info({ node, osds: ids, ms: Date.now() - started }, 'marked the fenced node\'s OSDs down');
    } catch (err) {
      logger.warn({ node, err: describeError(err) }, 'could not mark the fenced node\'s OSDs down; Ceph will after its own grace');
    }
  }

  /** The OSD ids of `node` from Zookeeper; none (logged) when it cannot be read. */
  private async osdsOf(node: string): Promise<string[]> {
    const { zk, logger, zkTimeoutMs } = this.deps;
    if (!zk) return [];
    try {
      return await osdIdsOf(zk, node, zkTimeoutMs, logger);
    } catch (err) {
      logger.warn({ node, err: describeError(err) }, 'could not mark the fenced node\'s OSDs down; Ceph will after its own grace');
      return [];
    }
  }

  setPrimary(primary: boolean, reason: string): Promise<boolean> {
    return this.deps.role.set(primary, reason);
  }

  /** Waits for `signal`, then drops the primary duties if held. */
  async run(signal: AbortSignal): Promise<void> {
    this.stopping = signal;
    await untilAborted(signal);
    await this.deps.role.set(false, 'shutdown').catch((err: unknown) => {
      this.deps.logger.error({ err: describeError(err) }, 'primary duties did not stop cleanly at shutdown');
    });
  }

  private problem(text: string): void {
    if (text === this.lastProblem) return;
    if (text) this.deps.logger.warn({ problem: text }, 'storage statistics problem');
    else this.deps.logger.info('storage statistics recovered');
    this.lastProblem = text;
  }
}
