import type { Clock } from '@pvc/runtime';
import { describeError } from '@pvc/runtime';
import {
  clusterKeys, createLock, isZkError, locks, nodeKeys, pair, readKey, readKeyWithStat, readNodeRecord,
  type LockHolder, type NodeDomainState, type NodeRecord, type WritePair, type ZkOp,
} from '@pvc/zk';
import { fenceIpmi, type FenceIpmiOptions, type FenceResult, type Ipmi } from '@pvc/ipmi';
import type { LivenessTracker } from './liveness.js';
import { recoverVms, type RecoveryDeps } from './recovery.js';
import { resetWaitMs } from './rules.js';
import { setOp } from './set-op.js';

/** Fencing settings (`system.fencing`), in ms. */
export interface FenceSettings {
  intervalMs: number;
  fenceIntervals: number;
  suicideIntervals: number;
  successfulFence: 'migrate' | 'none';
  failedFence: 'migrate' | 'none';
  /** BMC port used for every node (ZK stores only the host). */
  ipmiPort: number;
  /** The suicide peer check is on (`peer_check_port` ≠ 0): a cut-off node may reset later (`resetWaitMs`). */
  peerCheck?: boolean;
  ipmi?: FenceIpmiOptions;
}

export interface FencerDeps extends RecoveryDeps {
  clock: Clock;
  /** Process shutdown: the only thing that interrupts an IPMI power cycle once started. */
  shutdown?: AbortSignal;
  ipmi: Ipmi;
  liveness: LivenessTracker;
  settings: FenceSettings;
}

/** Resource keys zeroed once a node's VMs are gone (the original's post-fence reset). */
function zeroKeys(node: string): WritePair[] {
  const k = nodeKeys(node);
  return [
    // The original writes "0" for "no VMs" here (its codec reads it as the empty list).
    [k.runningDomains.path, '0'],
    pair(k.domainsCount, 0), pair(k.cpuLoad, 0), pair(k.vcpuAlloc, 0),
    pair(k.memAlloc, 0), pair(k.memProv, 0), pair(k.memUsed, 0), pair(k.memFree, 0), pair(k.monitoringHealth, null),
  ];
}

/**
 * Fences one node and recovers its VMs. Must be called with the cluster fence lock held, and
 * `signal` must abort when that lock (or the ZK session) is lost — nothing here may act without
 * quorum. The node's progress lives in its daemon/domain state so another fencer can resume:
 * `run` → (declare) `dead` + `fence-flush` → (IPMI ok) `fenced` → (recovery) `flushed`. A node left
 * `dead` with another domain state had its failed fence handled already (action none): it is not
 * fenced again until it checks in and dies anew.
 */
export class Fencer {
  constructor(private readonly deps: FencerDeps) {}

  private get windowMs(): number {
    return this.deps.settings.intervalMs * this.deps.settings.fenceIntervals;
  }

  /** Handles `node` according to its state; returns what it did. */
  async handle(node: string, signal: AbortSignal): Promise<'fenced' | 'resumed' | 'alive' | 'skipped'> {
    const rec = await readNodeRecord(this.deps.zk, node, this.deps.logger);
    if (!rec) return 'skipped';
    if (rec.daemonState === 'run') return this.declareAndFence(rec, signal);
    if (rec.daemonState === 'dead' && rec.domainState === 'fence-flush') {
      await this.fenceAndRecover(rec, 'ready', true, signal);
      return 'resumed';
    }
    if (rec.daemonState === 'fenced' && rec.domainState === 'fence-flush') {
      await this.afterFence(rec, { outcome: 'success' }, 'ready', signal);
      return 'resumed';
    }
    return 'skipped';
  }

  /** Re-checks with fresh reads, then declares the node dead in one guarded transaction. */
  private async declareAndFence(rec: NodeRecord, signal: AbortSignal): Promise<'fenced' | 'alive' | 'skipped'> {
    const { zk, liveness, clock, events, self, logger } = this.deps;
    const k = nodeKeys(rec.name);
    const ka = await readKeyWithStat(zk, k.keepalive, { logger });
    if (ka === undefined) return 'skipped';
    liveness.observe(rec.name, ka.stat.version, ka.value);
    const silent = liveness.silentForMs(rec.name) ?? 0;
    if (silent < this.windowMs) {
      events({ kind: 'node-alive', node: rec.name, fencer: self, reason: 'keepalive changed on re-check' });
      return 'alive';
    }
    const lock = createLock(zk, locks.nodeDaemonState(rec.name), { clock, identifier: self });
    // A fencer that died between taking this lock and declaring the node holds it until its
    // session expires: broken like the fence lock when that fencer is silent for the window.
    const breakHolder = (h: LockHolder): ZkOp[] | undefined => liveness.deadHolderGuard(h, self, this.windowMs);
    if (!(await lock.acquire({ timeoutMs: 2_000, signal, breakHolder }))) return 'skipped';
    try {
      const ds = await readKeyWithStat(zk, k.daemonState, { logger });
      if (ds?.value !== 'run') return 'skipped';
      try {
        await zk.multi([
          { type: 'check', path: k.keepalive.path, version: ka.stat.version },
          setOp(pair(k.daemonState, 'dead'), ds.stat.version),
          setOp(pair(k.domainState, 'fence-flush')),
        ]);
      } catch (err) {
        if (!isZkError(err, 'BAD_VERSION', 'NO_NODE')) throw err;
        events({ kind: 'node-alive', node: rec.name, fencer: self, reason: 'state changed while declaring it dead' });
        return 'alive';
      }
      events({ kind: 'node-dead', node: rec.name, fencer: self, silentMs: silent });
      await this.fenceAndRecover(rec, rec.domainState, false, signal);
      return 'fenced';
    } finally {
      await lock.release().catch(() => false);
    }
  }

  private async fenceAndRecover(rec: NodeRecord, prevDomainState: NodeDomainState | undefined, resumed: boolean, signal: AbortSignal): Promise<void> {
    const { events, self, zk } = this.deps;
    events({ kind: 'fence-start', node: rec.name, fencer: self, resumed });
    // Recovery starts as soon as the node is confirmed off; its power-on runs meanwhile (with a
    // BMC at 3 s a call that is 6 s sooner) and is not waited for: the node is `fenced` and then
    // `flushed`, so no fencer touches it again before it has booted, run and died anew.
    let confirmedOff = (): void => undefined;
    const off = new Promise<undefined>((resolve) => (confirmedOff = () => resolve(undefined)));
    const cycle = this.powerCycle(rec, signal, confirmedOff);
    const early = await Promise.race([off, cycle]);
    const result = early ?? { outcome: 'success' as const, reason: 'node confirmed off; powering it back on' };
    try {
      events({ kind: 'fence-result', node: rec.name, fencer: self, outcome: result.outcome, reason: result.reason });
      signal.throwIfAborted();
      if (result.outcome === 'success') await zk.write([pair(nodeKeys(rec.name).daemonState, 'fenced')], { conflictRetries: 3, signal });
      await this.afterFence(rec, result, prevDomainState, signal);
    } finally {
      void cycle.catch((err: unknown) => this.deps.logger.warn({ node: rec.name, err: describeError(err) }, 'power-on after the fence did not finish'));
    }
  }

  /**
   * The IPMI power cycle. Quorum was proven by the write that declared the node dead; once the
   * power-off is sent the cycle is finished even if ZK goes away meanwhile (an aborted cycle
   * would leave the node off with nobody to turn it on). Only process shutdown interrupts it.
   */
  private async powerCycle(rec: NodeRecord, _held: AbortSignal, onConfirmedOff: () => void): Promise<Pick<FenceResult, 'outcome' | 'reason'>> {
    const signal = this.deps.shutdown ?? new AbortController().signal;
    const { host, user, pass } = rec.ipmi;
    if (host === '' || user === '' || pass === '') return { outcome: 'failed', reason: `no IPMI details in ZK for ${rec.name}` };
    try {
      const target = { host, user, pass, port: this.deps.settings.ipmiPort };
      return await fenceIpmi({ ipmi: this.deps.ipmi, clock: this.deps.clock, logger: this.deps.logger }, target, { ...this.deps.settings.ipmi, signal, onConfirmedOff });
    } catch (err) {
      if (signal.aborted) throw err;
      return { outcome: 'failed', reason: describeError(err) };
    }
  }

  /** Primary hand-off, then the configured action (migrate or none). */
  private async afterFence(rec: NodeRecord, result: { outcome: 'success' | 'failed' }, prevDomainState: NodeDomainState | undefined, signal: AbortSignal): Promise<void> {
    const { zk, events, self, settings } = this.deps;
    await this.releasePrimary(rec, result.outcome === 'success', signal);
    let action = result.outcome === 'success' ? settings.successfulFence : settings.failedFence;
    if (action === 'migrate' && result.outcome === 'failed') action = await this.awaitSuicide(rec.name, signal);
    const k = nodeKeys(rec.name);
    if (action === 'none') {
      events({ kind: 'fence-skipped', node: rec.name, fencer: self, reason: `action none after ${result.outcome} fence: VMs left assigned` });
      const back = prevDomainState === 'fence-flush' || prevDomainState === undefined ? 'ready' : prevDomainState;
      await zk.write([pair(k.domainState, back)], { conflictRetries: 3, signal });
      return;
    }
    const { recovered, left } = await recoverVms(this.deps, rec.name, signal);
    await zk.write([...zeroKeys(rec.name), pair(k.domainState, 'flushed')], { conflictRetries: 3, signal });
    events({ kind: 'recovery-done', node: rec.name, fencer: self, recovered, left });
  }

  /**
   * A dead coordinator is no longer primary: `primary_node=none` (another takes over). Its
   * `routerstate` becomes `secondary` only when it is confirmed off; after a failed fence it keeps
   * what it said, so a takeover waits until a cut-off primary must have dropped its duties.
   */
  private async releasePrimary(rec: NodeRecord, confirmedOff: boolean, signal: AbortSignal): Promise<void> {
    if (rec.daemonMode !== 'coordinator') return;
    const pairs: WritePair[] = confirmedOff ? [pair(nodeKeys(rec.name).routerState, 'secondary')] : [];
    if ((await readKey(this.deps.zk, clusterKeys.primaryNode, { logger: this.deps.logger })) === rec.name) pairs.push(pair(clusterKeys.primaryNode, 'none'));
    if (pairs.length > 0) await this.deps.zk.write(pairs, { conflictRetries: 3, signal });
  }

  /**
   * After a failed fence, `migrate` is only safe once the node has certainly reset itself: it
   * resets after `suicide_intervals` without a keepalive, so wait until that much time (plus a
   * margin for its VM stop and reset, and for the suicide peer check when it is on) has passed
   * since we last saw its keepalive. Without suicide, refuse.
   */
  private async awaitSuicide(node: string, signal: AbortSignal): Promise<'migrate' | 'none'> {
    const { settings, liveness, clock, logger } = this.deps;
    if (settings.suicideIntervals <= 0) {
      logger.error({ node }, 'failed_fence is migrate but suicide_intervals is 0: the node may still run its VMs, so they are left (migrating would risk running a VM twice)');
      return 'none';
    }
    const silent = liveness.silentUnvouchedForMs(node) ?? 0;
    // Includes a margin for the node's own VM stop and reset after its suicide deadline.
    const waitMs = (resetWaitMs(settings.intervalMs, settings.suicideIntervals, { peerCheck: settings.peerCheck }) ?? 0) - silent;
    if (waitMs > 0) {
      logger.warn({ node, waitMs }, 'fence failed: waiting for the node to have reset itself before recovering its VMs');
      await clock.sleep(waitMs, signal);
    }
    return 'migrate';
  }
}
