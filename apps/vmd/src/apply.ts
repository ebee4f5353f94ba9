import { describeError, type Clock, type Logger } from '@pvc/runtime';
import { domainKeys, interfaceBridges, pair, readKey, readKeys, type ZkClient } from '@pvc/zk';
import { prepareXml } from './domain-xml.js';
import { waitForBridges, type HostBridges } from './host/bridges.js';
import { VmdError } from './errors.js';
import type { Hypervisor } from './host/hypervisor.js';
import type { MigrationTracker } from './migration/tracker.js';
import { flushBeforeStart } from './storage/flush-before-start.js';
import type { RbdStartGuard } from './storage/start-guard.js';
import type { Action, Expect, ShutdownInProgress } from './model.js';
import type { StartHandover, StartJobs, StartRun } from './start-jobs.js';

/** What the apply step works with. */
export interface ApplyDeps {
  zk: ZkClient;
  hv: Hypervisor;
  clock: Clock;
  logger: Logger;
  /** `system.configuration.hypervisor.domain_type`. */
  domainType: string;
  /** Graceful shutdowns in progress (owned by the reconciler, changed here). */
  shutdowns: Map<string, ShutdownInProgress>;
  /** Runs migration jobs in the background; absent = migrations are logged and not done. */
  migrations?: MigrationTracker | undefined;
  /** RBD lock flush through cephd before a start (`functions.enable_storage`); absent = none. */
  rbd?: RbdStartGuard | undefined;
  /** Runs starts in the background, bounded (owned by the reconciler). */
  starts: StartJobs;
  /** Why no VM may be started here now (fence-flush, dead, halted…), read by a start job right before it acts. */
  startBlocked?: (() => string | undefined) | undefined;
  /**
   * The bridges a VM's interfaces name must exist before it is created (waited for up to
   * `boundMs`, then the VM fails naming the bridge and its network); absent = not checked.
   */
  bridges?: { port: HostBridges; boundMs: number; node: string } | undefined;
}

/**
 * Outcome of one action. `skipped` = ZK changed since planning, or a start not handed over (see
 * `NOT_STARTED`); `started` = a start handed to {@link StartJobs} (queued for a slot; the queue
 * logs its failures, once per change).
 */
export interface ActionResult {
  action: Action;
  outcome: 'done' | 'started' | 'skipped' | 'failed';
  error?: string;
}

/**
 * Applies a plan. Actions of different VMs run concurrently, those of one VM in order; a failure
 * is recorded in the result and the pass goes on. Starts are handed to the background
 * ({@link StartJobs}): a pass never waits for a createXML. Before a start, destroy, shutdown or
 * state write the VM's state and node are re-read from ZK and compared with what the plan saw
 * (for a start: in its job, right before it acts).
 */
export async function applyActions(actions: readonly Action[], deps: ApplyDeps): Promise<ActionResult[]> {
  const byVm = new Map<string, Action[]>();
  for (const a of actions) byVm.set(a.uuid, [...(byVm.get(a.uuid) ?? []), a]);
  const groups = await Promise.all(
    [...byVm.values()].map(async (list) => {
      const out: ActionResult[] = [];
      for (const a of list) out.push(await applyOne(a, deps));
      return out;
    }),
  );
  return groups.flat();
}

async function applyOne(action: Action, deps: ApplyDeps): Promise<ActionResult> {
  try {
    if (action.kind === 'forget-shutdown') {
      deps.shutdowns.delete(action.uuid);
      return { action, outcome: 'done' };
    }
    if (action.kind === 'log') return { action, outcome: 'done' };
    // Contract: nothing destructive without a live ZK session (a node cut off leaves its VMs alone).
    if (deps.zk.state !== 'connected') return { action, outcome: 'skipped', error: 'ZK session not connected' };
    if (action.kind === 'start') return handOver(action, deps);
    if (!(await stillWanted(action.uuid, action.expect, deps))) return { action, outcome: 'skipped' };
    await run(action, deps);
    return { action, outcome: 'done' };
  } catch (err) {
    return { action, outcome: 'failed', error: logFailure(action, err, deps) };
  }
}

function logFailure(action: Action, err: unknown, deps: ApplyDeps): string {
  const error = describeError(err);
  const name = 'name' in action ? action.name : action.uuid;
  deps.logger.error({ vm: name, uuid: action.uuid, action: action.kind, err: error }, 'VM action failed');
  return error;
}

/**
 * Hands a start to {@link StartJobs}. The job runs when a slot is free — maybe much later, maybe
 * as a retry — so right before it acts it re-checks the session, the start guard (fence-flush,
 * dead, halted) and the VM's ZK keys, and after a try that threw, that libvirt does not already
 * run the domain (a createXML whose answer was lost must not be sent twice).
 */
function handOver(action: Extract<Action, { kind: 'start' }>, deps: ApplyDeps): ActionResult {
  const log = deps.logger.child({ vm: action.name, uuid: action.uuid });
  const job = async ({ signal, retry }: StartRun): Promise<string | undefined> => {
    // Contract (as above, checked again: the job may run after the session dropped).
    if (signal.aborted || deps.zk.state !== 'connected') return undefined;
    const blocked = deps.startBlocked?.();
    if (blocked !== undefined) {
      log.info({ blocked }, 'start not attempted: starts are blocked here now');
      return undefined;
    }
    if (!(await stillWanted(action.uuid, action.expect, deps))) return undefined;
    if (retry && (await deps.hv.list()).some((d) => d.uuid === action.uuid && d.active)) {
      log.info('the VM runs here after a start try that failed: not created again');
      await clearFailedReason(action.uuid, deps);
      return undefined;
    }
    return startVm(action, { ...deps, logger: log }, signal);
  };
  const handed = deps.starts.run(action.uuid, job, action.name);
  if (handed === 'started') return { action, outcome: 'started' };
  return { action, outcome: 'skipped', error: NOT_STARTED[handed] };
}

const NOT_STARTED: Record<Exclude<StartHandover, 'started'>, string> = {
  busy: 'a start of this VM is queued or in progress',
  backoff: 'its last start failed: retried after its own growing delay (the latest plan\'s job is kept)',
  cancelled: 'vmd starts nothing more (stopping, or after stopAll)',
};

async function stillWanted(uuid: string, expect: Expect, deps: ApplyDeps): Promise<boolean> {
  const k = domainKeys(uuid);
  const [state, node] = await readKeys(deps.zk, [k.state, k.node], { logger: deps.logger });
  return state === expect.state && node === expect.node;
}

type Exec<K extends Action['kind']> = (a: Extract<Action, { kind: K }>, deps: ApplyDeps, signal?: AbortSignal) => Promise<void>;

async function run(action: Action, deps: ApplyDeps): Promise<void> {
  const log = deps.logger.child({ vm: 'name' in action ? action.name : action.uuid, uuid: action.uuid });
  switch (action.kind) {
    case 'destroy':
      return destroyVm(action, { ...deps, logger: log });
    case 'shutdown':
      await deps.hv.shutdown(action.uuid);
      deps.shutdowns.set(action.uuid, { sinceMs: deps.clock.now(), then: action.then });
      log.info({ then: action.then }, 'graceful shutdown requested');
      return;
    case 'set-state':
      await deps.zk.write([pair(domainKeys(action.uuid).state, action.state)]);
      log.info({ state: action.state, why: action.why }, 'state written');
      return;
    case 'migrate-send':
    case 'migrate-receive':
      if (!deps.migrations) throw new VmdError('MIGRATION_FAILED', 'migration is not available (vmd built without Exec)');
      deps.migrations.start(action.kind === 'migrate-send'
        ? { side: 'send', uuid: action.uuid, name: action.name, target: action.target }
        : { side: 'receive', uuid: action.uuid, name: action.name });
      log.info({ side: action.kind, state: action.expect.state, node: action.expect.node }, 'migration job started');
      return;
    default:
      return;
  }
}

/** Creates the domain; returns the `failedreason` written when the VM was failed for good (terminal). */
async function startVm(a: Extract<Action, { kind: 'start' }>, deps: ApplyDeps, signal: AbortSignal): Promise<string | undefined> {
  const k = domainKeys(a.uuid);
  const t0 = deps.clock.now();
  const refused = deps.rbd && (await flushBeforeStart(deps.rbd, a.uuid, deps));
  if (refused) return refused;
  // After stopAll (halt) or on the way out: nothing is created any more.
  if (signal.aborted) return undefined;
  try {
    const stored = await readKey(deps.zk, k.xml, { logger: deps.logger });
    if (stored.trim() === '') throw new VmdError('BAD_XML', 'the VM has no stored XML (xml key empty or missing)');
    if (deps.bridges) {
      const { port, boundMs, node } = deps.bridges;
      await waitForBridges(port, interfaceBridges(stored), { clock: deps.clock, boundMs, node, signal });
      if (signal.aborted) return undefined;
    }
    await deps.hv.createTransient(prepareXml(stored, a.uuid, { domainType: deps.domainType }));
  } catch (err) {
    if (err instanceof VmdError && (err.code === 'LIBVIRT_ERROR' || err.code === 'BAD_XML' || err.code === 'MISSING_BRIDGE')) {
      await deps.zk.write([pair(k.state, 'fail'), pair(k.failedReason, err.message)]);
      deps.logger.error({ key: k.xml.path, failedreason: err.message }, 'VM failed to start: state fail');
      return err.message;
    }
    throw err;
  }
  deps.logger.info({ ms: deps.clock.now() - t0 }, 'VM started');
  await clearFailedReason(a.uuid, deps);
  return undefined;
}

async function clearFailedReason(uuid: string, deps: ApplyDeps): Promise<void> {
  const k = domainKeys(uuid).failedReason;
  if ((await readKey(deps.zk, k)) !== '') await deps.zk.write([pair(k, '')]);
}

const destroyVm: Exec<'destroy'> = async (a, deps) => {
  await deps.hv.destroy(a.uuid);
  deps.shutdowns.delete(a.uuid);
  deps.logger.info({ why: a.why }, 'VM destroyed');
  if (a.writeState) await deps.zk.write([pair(domainKeys(a.uuid).state, a.writeState)]);
};
