import type { Config } from '@pvc/config';
import { describeError, type Clock, type Exec, type Logger } from '@pvc/runtime';
import type { VmdApi } from '@pvc/rpc';
import type { ZkClient } from '@pvc/zk';
import { ConsoleWatcher, type ConsoleFiles, type LiveXmlReader } from './console/index.js';
import type { Hypervisor } from './host/hypervisor.js';
import { createVirshMigrator, type LiveMigrator } from './host/virsh-migrate.js';
import { watchLibvirtEvents } from './host/libvirt-events.js';
import { NodeFlusher } from './flush/flusher.js';
import { createMigrations } from './migration/create.js';
import { Reconciler } from './reconciler.js';
import type { RbdLocks } from './storage/rbd-locks.js';
import { BRIDGE_WAIT_MS, type HostBridges } from './host/bridges.js';
import { RbdStartGuard } from './storage/start-guard.js';
import { createVmdService } from './rpc/vmd-service.js';

/** The real or fake ports vmd runs on. */
export interface VmdPorts {
  zk: ZkClient;
  hv: Hypervisor;
  clock: Clock;
  logger: Logger;
  /** For the libvirt event stream; omitted = periodic resync only. */
  exec?: Exec;
  /** Console log files and live XML (consolelog / vnc keys); omitted = not written. */
  console?: { files: ConsoleFiles; liveXml: LiveXmlReader };
  /** cephd's lock flush; used before a start when `functions.enable_storage` (omitted = none). */
  rbd?: RbdLocks;
  /** Looks up host bridges before a start (omitted = not checked). */
  bridges?: HostBridges;
  /** Live migration; omitted = virsh over `exec` (neither: migration states are not acted on). */
  migrator?: LiveMigrator;
}


/** Builds the reconciler and the gRPC implementation from the config and ports. */
export function createVmd(config: Config, ports: VmdPorts): { reconciler: Reconciler; api: VmdApi; console?: ConsoleWatcher } {
  const hyp = config.system.configuration.hypervisor;
  const watcher = ports.console && new ConsoleWatcher({
    ...ports.console, zk: ports.zk, clock: ports.clock, logger: ports.logger.child({ component: 'console' }), node: config.node,
    lines: config.system.configuration.logging.console_log_lines,
    consoleDir: config.system.configuration.directories.console_log_directory,
  });
  const migrator = ports.migrator ?? (ports.exec && createVirshMigrator(ports.exec, hyp.libvirt_uri));
  const migrations = migrator && createMigrations(config, { ...ports, migrator });
  const reconciler = new Reconciler({
    zk: ports.zk,
    hv: ports.hv,
    clock: ports.clock,
    logger: ports.logger.child({ component: 'reconciler' }),
    node: config.node,
    domainType: hyp.domain_type,
    shutdownTimeoutMs: hyp.vm_shutdown_timeout * 1000,
    statsIntervalMs: config.system.fencing.intervals.keepalive_interval * 1000,
    migrations,
    rbd: config.functions.enable_storage && ports.rbd ? new RbdStartGuard(ports.rbd) : undefined,
    bridges: ports.bridges && { port: ports.bridges, boundMs: BRIDGE_WAIT_MS, node: config.node },
    flusher: new NodeFlusher({ zk: ports.zk, hv: ports.hv, clock: ports.clock, logger: ports.logger.child({ component: 'flush' }), node: config.node }),
    onObserved: watcher && ((desired, observed) => watcher.sync(desired, observed)),
  });
  if (migrations) migrations.onDone = () => reconciler.trigger();
  const api = createVmdService({
    hv: ports.hv,
    logger: ports.logger.child({ component: 'rpc' }),
    resources: () => reconciler.resources(),
    halt: (r) => reconciler.halt(r),
  });
  return { reconciler, api, console: watcher };
}

/** Runs vmd until `signal` aborts. Running VMs are left alone on the way out (they belong to libvirtd). */
export async function runVmd(
  config: Config, ports: VmdPorts, reconciler: Reconciler, signal: AbortSignal, watcher?: ConsoleWatcher,
): Promise<void> {
  const events = ports.exec
    ? watchLibvirtEvents({
        exec: ports.exec, clock: ports.clock, logger: ports.logger.child({ component: 'events' }),
        uri: config.system.configuration.hypervisor.libvirt_uri, onEvent: () => reconciler.trigger(), signal,
      })
    : Promise.resolve();
  try {
    await reconciler.run(signal);
  } finally {
    await watcher?.stop();
    await events;
    ports.rbd?.close();
    await ports.hv.close();
  }
}

/**
 * Connects to Zookeeper, retrying every 5 s until it works or `signal` aborts (then undefined):
 * vmd waits for ZK rather than exiting, and a SIGTERM meanwhile is a clean stop.
 */
export async function connectUntilReady(
  connect: () => Promise<ZkClient>,
  opts: { signal: AbortSignal; clock: Clock; logger: Logger },
): Promise<ZkClient | undefined> {
  for (let attempt = 1; !opts.signal.aborted; attempt++) {
    try {
      return await connect();
    } catch (err) {
      if (opts.signal.aborted) return undefined;
      opts.logger.warn({ attempt, err: describeError(err) }, 'cannot connect to Zookeeper yet; retrying in 5 s');
      await opts.clock.sleep(5000, opts.signal).catch(() => undefined);
    }
  }
  return undefined;
}

