import type { Ipmi } from '@pvc/ipmi';
import { AbortedError, describeError, type Exec } from '@pvc/runtime';
import type { ZkClient } from '@pvc/zk';
import { ipmiSelfCheck, checkLibvirt } from './bringup/checks.js';
import { writeDaemonState } from './bringup/registration.js';
import { bringUp, type BringUpDeps } from './bringup/sequence.js';
import type { RestartPolicy } from './children/backoff.js';
import { ChildGroup } from './children/group.js';
import type { ProcessPort, ProcessSpec } from './host/process-port.js';
import type { SupervisorStatus } from './status.js';

/** Everything the supervisor acts through (built by main.ts; fakes in tests). */
export interface SupervisorDeps extends BringUpDeps {
  readonly exec: Exec;
  readonly ipmi: Ipmi;
  readonly processes: ProcessPort;
  readonly childSpecs: readonly ProcessSpec[];
  readonly policy: RestartPolicy;
  readonly status: SupervisorStatus;
  /** Tells systemd the unit is ready (systemd mode). */
  readonly notifyReady: () => Promise<boolean>;
  /** Resolves when shutdown is requested (SIGTERM/SIGINT). */
  readonly shutdownRequested: Promise<string>;
  /** Called with the child group once it runs (main.ts forwards SIGHUP to it). */
  readonly onChildren?: (group: ChildGroup) => void;
  /** Writes the buffered node log lines to Zookeeper before the session is closed. */
  readonly flushLog?: () => Promise<void>;
}

async function safeState(d: SupervisorDeps, zk: ZkClient, state: 'shutdown' | 'stop'): Promise<void> {
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
    d.logger.info({ registration: r.registration, rounds: r.rounds, elapsedMs: d.clock.now() - t0 }, 'node registered: daemon state init');
  } catch (err) {
    if (err instanceof AbortedError) return void d.logger.info('shutdown requested during bring-up');
    throw err;
  }
  const { selfCheck } = await checksAfterRegistration(d, zk);
  let group: ChildGroup | undefined;
  if (d.options.mode === 'standalone') {
    group = new ChildGroup(d.childSpecs, { processes: d.processes, clock: d.clock, logger: d.logger, policy: d.policy });
    d.status.attach(group);
    group.startAll();
    d.onChildren?.(group);
    d.logger.info({ children: d.childSpecs.map((s) => s.name) }, 'services launched');
  } else {
    await d.notifyReady();
    d.logger.info('systemd mode: bring-up done, the other units start now');
  }
  const reason = await d.shutdownRequested;
  d.logger.info({ reason }, 'stopping');
  await safeState(d, zk, 'shutdown');
  await group?.stopAll();
  await selfCheck;
  await safeState(d, zk, 'stop');
  await d.flushLog?.();
  await zk.close();
}
