import type { Logger } from '@pvc/runtime';
import { domainKeys, pair, readKey, type ZkClient } from '@pvc/zk';
import { VmdError } from '../errors.js';
import type { RbdStartGuard } from './start-guard.js';

/**
 * The RBD step of a start: reads the VM's `rbdlist` and flushes those images' locks through cephd.
 * undefined = go on with the start. On a failed flush it throws `RBD_LOCKS` (retryable: the start
 * is not attempted; the start queue tries again after its growing per-VM delay); after the guard's
 * limit, or at once when another node holds a lock, it writes `state=fail` with the reason in
 * `failedreason` and returns that reason (the start's terminal outcome).
 */
export async function flushBeforeStart(guard: RbdStartGuard, uuid: string, deps: { zk: ZkClient; logger: Logger }): Promise<string | undefined> {
  const k = domainKeys(uuid);
  // commaList: items trimmed, empties dropped, `None` (the API's str(None)) is no image.
  const images = await readKey(deps.zk, k.rbdList, { logger: deps.logger });
  const verdict = await guard.beforeStart(uuid, images);
  if (verdict.kind === 'go') {
    if (images.length > 0) deps.logger.info({ images }, 'RBD locks flushed before start');
    return undefined;
  }
  if (verdict.kind === 'retry') {
    throw new VmdError('RBD_LOCKS', `RBD lock flush before start failed (attempt ${verdict.attempt} of ${guard.limit}): ${verdict.reason}; start not attempted, retried after a growing delay`, { retryable: true });
  }
  await deps.zk.write([pair(k.state, 'fail'), pair(k.failedReason, verdict.reason)]);
  if (verdict.held) deps.logger.error({ images, held: verdict.held, failedreason: verdict.reason }, 'VM not started: another node holds an RBD lock; state fail');
  else deps.logger.error({ images, failedreason: verdict.reason }, 'VM not started: RBD locks could not be freed; state fail');
  return verdict.reason;
}
