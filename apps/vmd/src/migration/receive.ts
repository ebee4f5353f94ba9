import { describeError } from '@pvc/runtime';
import { domainKeys, locks, pair, readKey } from '@pvc/zk';
import { lockOf, type MigrationDeps } from './deps.js';

/** How a receive ended (for logs and tests). */
export type ReceiveOutcome = 'received' | 'start-after-shutdown' | 'failed' | 'aborted-by-sender' | 'nothing-arrived';

/**
 * Receiver side of a migration (inventory §5.4), on the node the VM is assigned to while it is not
 * running here: announce in `migrate_sync_lock`, take its lock for `holdMs` (phase A: the sender
 * queues behind it), then lock it again and wait for the sender to release (it has migrated,
 * shut down or aborted), and conclude from what libvirt runs here:
 * running → `start`; defined but not running → `fail` "Failed to receive migration"; absent with
 * `stop` (shutdown migration) → `start` (the normal start path starts it here); absent otherwise
 * → nothing (aborted: the sender wrote `start` + its own node; or no sender yet: the next pass retries).
 */
export async function receiveVm(uuid: string, name: string, d: MigrationDeps, signal: AbortSignal): Promise<ReceiveOutcome> {
  const k = domainKeys(uuid);
  const log = d.logger.child({ vm: name, uuid, side: 'receive' });
  const lock = lockOf(d, locks.domainMigrateSync(uuid));
  await d.zk.write([pair(k.migrateSyncLock, uuid)]);
  try {
    if (await lock.acquire({ timeoutMs: d.timings.syncTimeoutMs, signal })) {
      await d.clock.sleep(d.timings.holdMs, signal);
      await lock.release();
    }
    const bound = d.timings.lockTimeoutMs + d.timings.syncTimeoutMs + d.timings.liveAttempts * d.timings.liveTimeoutMs + d.shutdownTimeoutMs;
    if (!(await lock.acquire({ timeoutMs: bound, signal }))) {
      log.error({ ms: bound }, 'the sender held migrate_sync_lock too long: receive given up');
      return 'nothing-arrived';
    }
    return await conclude(uuid, d, log);
  } finally {
    await lock.release().catch(() => false);
    await d.zk.write([pair(k.migrateSyncLock, '')]).catch((err: unknown) => log.warn({ err: describeError(err) }, 'cannot clear migrate_sync_lock'));
  }
}

async function conclude(uuid: string, d: MigrationDeps, log: MigrationDeps['logger']): Promise<ReceiveOutcome> {
  const k = domainKeys(uuid);
  const dom = (await d.hv.list()).find((x) => x.uuid === uuid);
  const state = await readKey(d.zk, k.state, { logger: log });
  if (dom?.active) {
    await d.zk.write([pair(k.state, 'start'), pair(k.failedReason, '')]);
    log.info('migration received: VM runs here, state start');
    return 'received';
  }
  if (dom) {
    await d.zk.write([pair(k.state, 'fail'), pair(k.failedReason, 'Failed to receive migration')]);
    log.error({ libvirtState: dom.state }, 'Failed to receive migration: domain present but not running');
    return 'failed';
  }
  if (state === 'stop') {
    await d.zk.write([pair(k.state, 'start')]);
    log.info('shutdown migration: VM stopped on the sender, state start (starting here)');
    return 'start-after-shutdown';
  }
  if (state === 'start') {
    log.warn('migration aborted by the sender');
    return 'aborted-by-sender';
  }
  log.info({ state }, 'no migration arrived yet');
  return 'nothing-arrived';
}
