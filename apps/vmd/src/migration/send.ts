import { describeError } from '@pvc/runtime';
import { domainKeys, locks, pair, readKey, readKeys } from '@pvc/zk';
import { VmdError } from '../errors.js';
import { lockOf, releaseAll, type MigrationDeps } from './deps.js';

/** How a send ended (for logs and tests). */
export type SendOutcome = 'live' | 'shutdown' | 'aborted' | 'superseded';

type Log = MigrationDeps['logger'];

/**
 * Sender side (inventory §5.4), on the node running a VM whose `node` names another node with
 * state `migrate`/`migrate-live`: lock `node` and `state`, wait for the receiver's announcement in
 * `migrate_sync_lock` and lock it, set the max downtime, try live migration (3×), else (unless live
 * is forced by `migrate-live` or `migration_method=live`) shut the VM down here and write `stop`
 * (the receiver then writes `start`). `migration_method=shutdown` skips the live tries.
 * Any failure aborts: `state=start`, `node=<this node>`, `lastnode=<as before>`, `failedreason`
 * saying why — the VM keeps running here, never on both, never on neither.
 */
export async function sendVm(uuid: string, name: string, target: string, d: MigrationDeps, signal: AbortSignal): Promise<SendOutcome> {
  const k = domainKeys(uuid);
  const log = d.logger.child({ vm: name, uuid, side: 'send', target });
  const opts = { logger: log };
  const ls = [lockOf(d, locks.domainNode(uuid)), lockOf(d, locks.domainState(uuid)), lockOf(d, locks.domainMigrateSync(uuid))] as const;
  const [nodeLock, stateLock, syncLock] = ls;
  const t0 = d.clock.now();
  const lastnode = await readKey(d.zk, k.lastNode, opts);
  try {
    for (const l of [nodeLock, stateLock]) {
      if (!(await l.acquire({ timeoutMs: d.timings.lockTimeoutMs, signal }))) throw abort(`could not lock ${l.path} within ${d.timings.lockTimeoutMs} ms`);
    }
    const [state, node, method] = await readKeys(d.zk, [k.state, k.node, k.migrationMethod], opts);
    if (node !== target || (state !== 'migrate' && state !== 'migrate-live')) return 'superseded';
    if (target === d.node || target === lastnode) throw abort(`target ${target} is this node or the VM's lastnode`);
    const forceLive = state === 'migrate-live' || method === 'live';
    const forceShutdown = !forceLive && method === 'shutdown';
    await d.clock.sleep(d.timings.pauseMs, signal);
    await syncWithReceiver(uuid, target, d, signal);
    if (!(await syncLock.acquire({ timeoutMs: d.timings.syncTimeoutMs, signal }))) throw abort('Timed out waiting for peer');
    if ((await readKey(d.zk, k.node, opts)) !== target) throw abort('the target changed during the handshake');
    const live = forceShutdown ? 'skipped (migration_method shutdown)' : await tryLive(uuid, target, d, log, signal);
    if (live === true) {
      log.info({ ms: d.clock.now() - t0 }, 'live migration done');
      return 'live';
    }
    if (forceLive) throw abort(`live migration failed: ${live}`);
    log.warn({ why: live }, 'live migration not possible: shutdown migration');
    await shutdownHere(uuid, d, log, signal);
    await d.zk.write([pair(k.state, 'stop')]);
    log.info({ ms: d.clock.now() - t0 }, 'shutdown migration: VM off here, state stop (the receiver starts it)');
    return 'shutdown';
  } catch (err) {
    if (signal.aborted && !(err instanceof VmdError)) throw err;
    const why = describeError(err);
    await d.zk.write([pair(k.state, 'start'), pair(k.node, d.node), pair(k.lastNode, lastnode), pair(k.failedReason, `Migration to ${target} failed: ${why}`)]);
    log.error({ why }, 'migration aborted: VM stays here (state start, node back to this node)');
    return 'aborted';
  } finally {
    await releaseAll(ls);
  }
}

function abort(msg: string): VmdError {
  return new VmdError('MIGRATION_ABORTED', msg);
}

/** Waits until the receiver announced itself (`migrate_sync_lock` = uuid), up to syncTimeoutMs. */
async function syncWithReceiver(uuid: string, target: string, d: MigrationDeps, signal: AbortSignal): Promise<void> {
  const key = domainKeys(uuid).migrateSyncLock;
  const until = d.clock.now() + d.timings.syncTimeoutMs;
  while ((await readKey(d.zk, key)) !== uuid) {
    if (d.clock.now() >= until) throw abort(`Timed out waiting for peer (${target} did not start receiving within ${d.timings.syncTimeoutMs} ms)`);
    await d.clock.sleep(100, signal);
  }
}

/** Up to `liveAttempts` live migrations; true on success, else the last error. */
async function tryLive(uuid: string, target: string, d: MigrationDeps, log: Log, signal: AbortSignal): Promise<true | string> {
  // An absent or non-integer value reads as the original's default (300 ms); virsh refuses ≤ 0.
  const key = domainKeys(uuid).migrationMaxDowntime;
  const downtime = await readKey(d.zk, key, { logger: log });
  const ms = downtime > 0 ? downtime : key.fallback;
  try {
    await d.migrator.setMaxDowntime(uuid, ms);
  } catch (err) {
    return describeError(err);
  }
  let last = '';
  for (let i = 1; i <= d.timings.liveAttempts; i++) {
    try {
      await d.migrator.migrateLive(uuid, d.peer(target), d.timings.liveTimeoutMs);
      return true;
    } catch (err) {
      last = describeError(err);
      // A migration reported failed may still have completed: what libvirt runs here decides.
      if (!(await runsHere(uuid, d))) return true;
      log.warn({ attempt: i, err: last }, 'live migration attempt failed');
      if (i < d.timings.liveAttempts) await d.clock.sleep(d.timings.pauseMs, signal);
    }
  }
  return last;
}

async function runsHere(uuid: string, d: MigrationDeps): Promise<boolean> {
  return (await d.hv.list()).some((x) => x.uuid === uuid && x.active);
}

/** ACPI shutdown, polled every second; destroyed after `vm_shutdown_timeout`. */
async function shutdownHere(uuid: string, d: MigrationDeps, log: Log, signal: AbortSignal): Promise<void> {
  await d.hv.shutdown(uuid).catch((err: unknown) => log.warn({ err: describeError(err) }, 'ACPI shutdown request failed'));
  const until = d.clock.now() + d.shutdownTimeoutMs;
  while ((await runsHere(uuid, d)) && d.clock.now() < until) await d.clock.sleep(1000, signal);
  if (await runsHere(uuid, d)) {
    log.warn({ ms: d.shutdownTimeoutMs }, 'guest did not power off in time: destroyed');
    await d.hv.destroy(uuid);
  }
}
