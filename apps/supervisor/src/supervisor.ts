import type { Ipmi } from '@pvc/ipmi';
import { AbortedError, describeError, type Exec } from '@pvc/runtime';
import type { ZkClient } from '@pvc/zk';
import { ipmiSelfCheck, checkLibvirt } from './bringup/checks.js';
import { writeDaemonState } from './bringup/registration.js';
import { bringUp, type BringUpDeps } from './bringup/sequence.js';
import { planDatabases, provisionDatabases } from './bringup/databases.js';
import type { DatabaseAdmin } from './host/database-admin.js';
import { socketPath, SERVICES, type ServiceName } from '@pvc/rpc';
import { restartPolicyFor, type RestartPolicy } from './children/backoff.js';
import { ChildGroup } from './children/group.js';
import { waitForSocketsReleased, type ChildSocket } from './children/previous-generation.js';
import type { ProcessPort, ProcessSpec } from './host/process-port.js';
import type { SocketHolders } from './host/socket-holders.js';
import type { SupervisorStatus } from './status.js';

/** Everything the supervisor acts through (built by main.ts; fakes in tests). */
export interface SupervisorDeps extends BringUpDeps {
  readonly exec: Exec;
  readonly ipmi: Ipmi;
  /** PostgreSQL for the coordinator databases (created when absent, then a login checked). */
  readonly databases: DatabaseAdmin;
  readonly processes: ProcessPort;
  readonly childSpecs: readonly ProcessSpec[];
  /** The normal restart policy; capped by the fence window on this node ({@link restartPolicyFor}). */
  readonly policy: RestartPolicy;
  /** Who still holds the children's sockets (a previous generation), checked before spawning. */
  readonly socketHolders: SocketHolders;
  /** Bound of that wait (default 10 s: `SOCKET_RELEASE_BOUND_MS`). */
  readonly socketReleaseBoundMs?: number;
  readonly status: SupervisorStatus;
  /** Tells systemd the unit is ready (systemd mode). */
  readonly notifyReady: () => Promise<boolean>;
  /** Resolves when shutdown is requested (SIGTERM/SIGINT). */
  readonly shutdownRequested: Promise<string>;
  /** Called with the child group once it runs (main.ts forwards SIGHUP to it). */
  readonly onChildren?: (group: ChildGroup) => void;
  /**
   * Starts writing the node log (`/logs/<node>/messages`) through the session, called once the node
   * is registered: before that the cluster may not be initialised, and a `/logs` key written into it
   * would make `pvc cluster init` refuse (lines are buffered until then).
   */
  readonly attachLog?: (zk: ZkClient) => void;
  /** Writes the buffered node log lines to Zookeeper before the session is closed. */
  readonly flushLog?: () => Promise<void>;
}

async function safeState(d: SupervisorDeps, zk: ZkClient, state: 'shutdown' | 'stop'): Promise<void> {
  // Without a session a write waits out its deadline (seconds per state) while the node stops.
  if (zk.state !== 'connected') {
    d.logger.error({ state, zk: zk.state }, `could not write daemon state ${state}: no ZK session`);
    return;
  }
  try {
    await writeDaemonState(zk, d.config.node, state);
    d.logger.info({ state }, `daemon state ${state}`);
  } catch (err) {
    d.logger.error({ state, err: describeError(err) }, `could not write daemon state ${state}`);
  }
}

/** Post-registration checks; a libvirt failure ends the run like the original (cleanup, exit 1). */
async function checksAfterRegistration(d: SupervisorDeps, zk: ZkClient): Promise<{ selfCheck: Promise<boolean> }> {
  try {
    await checkLibvirt(d.config, d.exec, d.logger);
  } catch (err) {
    await safeState(d, zk, 'shutdown');
    await safeState(d, zk, 'stop');
    await zk.close();
    throw err;
  }
  // Only logged, so it runs beside the launch instead of delaying it.
  return { selfCheck: ipmiSelfCheck(d.config, d.ipmi, d.logger.child({ component: 'ipmi' })) };
}

function childSockets(d: SupervisorDeps): ChildSocket[] {
  const dir = d.config.system.configuration.directories.dynamic_directory;
  return d.childSpecs
    .filter((s) => (SERVICES as readonly string[]).includes(s.name))
    .map((s) => ({ child: s.name, path: socketPath(dir, s.name as ServiceName) }));
}

/**
 * Standalone: waits (bounded) for a previous generation to release the children's sockets, then
 * starts the children under the fence-safe restart policy. Undefined when shutdown came first.
 */
async function startChildren(d: SupervisorDeps): Promise<ChildGroup | undefined> {
  const policy = restartPolicyFor(d.policy, d.config.system.fencing.intervals);
  d.logger.info(
    { initialDelayMs: policy.initialDelayMs, maxDelayMs: policy.maxDelayMs, fenceIntervals: d.config.system.fencing.intervals },
    policy === d.policy ? 'restart delays: the normal policy' : 'restart delays capped at half the fence detection window',
  );
  try {
    await waitForSocketsReleased(childSockets(d), { holders: d.socketHolders, clock: d.clock, logger: d.logger, signal: d.signal, boundMs: d.socketReleaseBoundMs });
  } catch (err) {
    if (err instanceof AbortedError) return undefined;
    throw err;
  }
  const group = new ChildGroup(d.childSpecs, { processes: d.processes, clock: d.clock, logger: d.logger, policy });
  d.status.attach(group);
  group.startAll();
  d.onChildren?.(group);
  d.logger.info({ children: d.childSpecs.map((s) => s.name) }, 'services launched');
  return group;
}

/**
 * The supervisor's life: bring-up and registration (daemon state `stop`→`init`), the libvirt and
 * IPMI checks, then either the children (standalone) or readiness to systemd; on shutdown, daemon
 * state `shutdown`, the children stopped in order, `stop`. Resolves when done; rejects when the
 * node cannot run (libvirt unreachable).
 */
export async function runSupervisor(d: SupervisorDeps): Promise<void> {
  const t0 = d.clock.now();
  d.status.setMode(d.options.mode);
  let zk: ZkClient;
  try {
    const r = await bringUp(d);
    zk = r.zk;
    d.attachLog?.(zk);
    d.logger.info({ registration: r.registration, rounds: r.rounds, elapsedMs: d.clock.now() - t0 }, 'node registered: daemon state init');
  } catch (err) {
    if (err instanceof AbortedError) return void d.logger.info('shutdown requested during bring-up');
    throw err;
  }
  const { selfCheck } = await checksAfterRegistration(d, zk);
  // Beside everything else, retried until the databases work: only the coordinator services that
  // use them (DNS aggregator, metadata API) wait for them.
  const dbStop = new AbortController();
  const databases = provisionDatabases(planDatabases(d.config), {
    admin: d.databases, clock: d.clock, logger: d.logger.child({ component: 'databases' }), signal: AbortSignal.any([d.signal, dbStop.signal]),
  }).catch((err: unknown) => d.logger.error({ err: describeError(err) }, 'database provisioning stopped'));
  let group: ChildGroup | undefined;
  if (d.options.mode === 'standalone') {
    group = await startChildren(d);
  } else {
    await d.notifyReady();
    d.logger.info('systemd mode: bring-up done, the other units start now');
  }
  const reason = await d.shutdownRequested;
  d.logger.info({ reason }, 'stopping');
  dbStop.abort();
  await databases;
  await safeState(d, zk, 'shutdown');
  await group?.stopAll();
  await selfCheck;
  await safeState(d, zk, 'stop');
  await d.flushLog?.();
  await zk.close();
}
