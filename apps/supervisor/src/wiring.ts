import type { ServiceContext } from '@pvc/rpc';
import { createExecSysctl, createIpLinks } from '@pvc/hostnet';
import { createIpmitoolIpmi } from '@pvc/ipmi';
import { createExec, PVC_VERSION, realClock } from '@pvc/runtime';
import { connectZk } from '@pvc/zk';
import { makeDirectory } from './bringup/directories.js';
import { DEFAULT_RESTART_POLICY } from './children/backoff.js';
import { childSpecs } from './children/launch.js';
import { createHostFacts } from './host/host-facts.js';
import { createNodeProcessPort } from './host/process-port.js';
import { createProcSocketHolders } from './host/socket-holders.js';
import { notifyReady } from './host/systemd-notify.js';
import { createSystemServices } from './host/system-services.js';
import { createPsqlDatabaseAdmin } from './host/database-admin.js';
import type { RunOptions } from './options.js';
import type { SupervisorStatus } from './status.js';
import type { SupervisorDeps } from './supervisor.js';

/** Children inherit the environment minus systemd's notification variables. */
function childEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out = { ...env };
  delete out.NOTIFY_SOCKET;
  return out;
}

/** The real ports, for main.ts. */
export function realDeps(ctx: ServiceContext, options: RunOptions, status: SupervisorStatus, env: NodeJS.ProcessEnv): SupervisorDeps {
  const { config, logger } = ctx;
  const exec = createExec(logger.child({ component: 'exec' }));
  return {
    config,
    options,
    logger,
    clock: realClock,
    exec,
    sysctl: createExecSysctl(exec),
    links: createIpLinks(exec),
    makeDirectory,
    services: createSystemServices(exec, { systemctl: options.systemctl }),
    connectZk: (timeoutMs, signal) =>
      connectZk(
        { hosts: config.cluster.coordinators, port: config.database.zookeeper.port, clock: realClock, logger: logger.child({ component: 'zk' }), opTimeoutMs: 5_000 },
        { timeoutMs, signal },
      ),
    attachLog: (zk) => ctx.zkLog.attach(zk),
    flushLog: () => ctx.zkLog.flush(),
    hostFacts: createHostFacts(exec),
    pvcVersion: PVC_VERSION,
    retryPauseMs: 2_000,
    signal: ctx.shutdown.signal,
    ipmi: createIpmitoolIpmi(exec),
    databases: createPsqlDatabaseAdmin(exec),
    processes: createNodeProcessPort(),
    childSpecs: childSpecs({
      execPath: process.execPath,
      execArgv: process.execArgv,
      configPath: config.source,
      env: childEnv(env),
      resolve: (s) => import.meta.resolve(s),
    }),
    policy: DEFAULT_RESTART_POLICY,
    socketHolders: createProcSocketHolders(),
    status,
    notifyReady: () => notifyReady(exec, env, logger),
    shutdownRequested: ctx.shutdown.requested,
    onChildren: (group) => process.on('SIGHUP', () => group.signalAll('SIGHUP')),
  };
}
