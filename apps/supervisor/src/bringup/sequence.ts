import type { Config } from '@pvc/config';
import { HostNetworkError, setupHostNetworking, type LinkPort, type SysctlPort } from '@pvc/hostnet';
import { AbortedError, describeError, type Clock, type Logger } from '@pvc/runtime';
import type { ZkClient } from '@pvc/zk';
import type { HostFacts } from '../host/host-facts.js';
import type { SystemServices } from '../host/system-services.js';
import type { RunOptions } from '../options.js';
import { bringUpDependentServices, planDependentServices } from './coordinator-services.js';
import { ensureDirectories, type MakeDirectory } from './directories.js';
import { clusterSchemaVersion, registerNode, type RegistrationOutcome } from './registration.js';
import { fillUnderSchemaLock } from './schema-fill.js';

/** Everything the bring-up sequence acts through. */
export interface BringUpDeps {
  readonly config: Config;
  readonly options: RunOptions;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly sysctl: SysctlPort;
  /** The kernel's links, addresses and routes (host interfaces). */
  readonly links: LinkPort;
  readonly makeDirectory: MakeDirectory;
  readonly services: SystemServices;
  /** Connects to the cluster's Zookeeper, giving up after `timeoutMs`. */
  readonly connectZk: (timeoutMs: number, signal: AbortSignal) => Promise<ZkClient>;
  readonly hostFacts: HostFacts;
  readonly pvcVersion: string;
  /** Pause before starting over after a failure that was quick (not the bounded ZK wait). */
  readonly retryPauseMs: number;
  /** Bound of the wait for the schema lock before the fill of missing keys (default 30 s). */
  readonly schemaLockTimeoutMs?: number;
  readonly signal: AbortSignal;
}

/** The result: a live session and the node registered with daemon state `init`. */
export interface BringUpResult {
  readonly zk: ZkClient;
  readonly registration: RegistrationOutcome;
  readonly rounds: number;
}

async function connectBounded(d: BringUpDeps): Promise<ZkClient> {
  d.logger.info({ coordinators: d.config.cluster.coordinators, port: d.config.database.zookeeper.port, giveUpMs: d.options.zkTimeoutMs }, 'connecting to Zookeeper');
  return d.connectZk(d.options.zkTimeoutMs, d.signal);
}

/**
 * One pass from the top: directories, host networking, dependent services, ZK, the schema check
 * and fill of missing keys (under the schema lock, before registration, as the original's steps
 * 5–9), registration.
 */
async function oneRound(d: BringUpDeps): Promise<Omit<BringUpResult, 'rounds'>> {
  await ensureDirectories(d.config, d.makeDirectory, d.logger);
  await setupHostNetworking(d.config, { sysctl: d.sysctl, links: d.links, clock: d.clock, logger: d.logger.child({ component: 'hostnet' }), signal: d.signal });
  d.logger.info({ mode: d.config.mode }, `this node is a ${d.config.mode}`);
  await bringUpDependentServices(planDependentServices(d.config), {
    services: d.services,
    clock: d.clock,
    logger: d.logger.child({ component: 'services' }),
    external: d.options.externalServices,
    timeoutMs: d.options.serviceTimeoutMs,
    signal: d.signal,
  });
  const zk = await connectBounded(d);
  try {
    const schema = await clusterSchemaVersion(zk);
    await fillUnderSchemaLock(zk, { clock: d.clock, logger: d.logger, signal: d.signal, ...(d.schemaLockTimeoutMs !== undefined ? { timeoutMs: d.schemaLockTimeoutMs } : {}) });
    const staticData = await d.hostFacts();
    const registration = await registerNode(zk, { config: d.config, staticData, pvcVersion: d.pvcVersion, clock: d.clock, logger: d.logger }, schema);
    return { zk, registration };
  } catch (err) {
    await zk.close();
    throw err;
  }
}

/**
 * The start-up sequence of the seed up to registration, repeated from the top until it succeeds
 * (or shutdown is requested, which rejects with AbortedError): a cluster that stays unreachable for
 * `zkTimeoutMs`, or an uninitialised tree, is logged and bring-up starts again. Host interfaces
 * that cannot be set up as configured (`HostNetworkError`: a missing device, a refused MTU, an
 * address in use, an unreachable gateway) are not retried: bring-up stops before the node
 * registers and the error, naming the config key, rejects (the supervisor exits 1, as for an
 * unreachable libvirt). The configuration itself is read once per process (the logger and socket
 * depend on it): changing it needs a restart.
 */
export async function bringUp(d: BringUpDeps): Promise<BringUpResult> {
  for (let round = 1; ; round++) {
    if (d.signal.aborted) throw new AbortedError('bring-up', d.signal.reason);
    const started = d.clock.now();
    try {
      const r = await oneRound(d);
      return { ...r, rounds: round };
    } catch (err) {
      if (err instanceof AbortedError || d.signal.aborted) throw new AbortedError('bring-up', err);
      if (err instanceof HostNetworkError) {
        d.logger.error({ err: err.message, code: err.code, round }, 'host networking cannot be set up as configured: bring-up stops before registration');
        throw err;
      }
      const code = (err as { code?: string }).code;
      d.logger.error({ err: describeError(err), code, round }, 'bring-up failed: starting again from the top');
      const elapsed = d.clock.now() - started;
      if (elapsed < d.retryPauseMs) await d.clock.sleep(d.retryPauseMs - elapsed, d.signal);
    }
  }
}
